console.log('launchpad');
