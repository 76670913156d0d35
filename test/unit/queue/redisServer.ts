// A real Redis server for the queue tests: redis-server from the system (CI installs it, see
// .ci/run), on a free port, in a temporary folder, nothing saved, stopped by stop() or when the
// test process exits. A missing redis-server fails the suite with what to install.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

import { tempDir } from '../helpers/tmp';

export interface RedisServer {
  /** With the password: redis://:<password>@127.0.0.1:<port>. */
  url: string;
  /** The server requires it (AUTH): tests check it never reaches a log or an output. */
  password: string;
  port: number;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function startRedis(): Promise<RedisServer> {
  const which = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  if (which.status !== 0)
    throw new Error(
      'redis-server is not installed: the queue tests need it (Debian: apt-get install -y redis-server; .ci/run installs it)',
    );
  const port = await freePort();
  const dir = tempDir('launchpad-redis-');
  const password = `pw${randomBytes(8).toString('hex')}`;
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--requirepass', password],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const kill = () => child.exitCode === null && child.kill('SIGKILL');
  process.once('exit', kill);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${out}`)), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${out}`));
    });
  });
  child.stdout!.resume();
  return {
    url: `redis://:${password}@127.0.0.1:${port}`,
    password,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        process.off('exit', kill);
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(kill, 3000).unref();
      }),
  };
}
