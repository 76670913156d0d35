// bullmq and ioredis for the queue's tests, stress and bench: optional peer dependencies, so a
// default install has neither. They are installed once under the repository's ignored .cache
// (the versions package.json's peerDependencies name, at their lowest), and put on NODE_PATH for
// this process's children (the CLI's run and worker) and its own requires.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

const REPO = resolve(__dirname, '../../../..');
const CACHE = join(REPO, '.cache', 'queue-packages');

/** The folder holding bullmq and ioredis (installed there first if need be), on NODE_PATH from now on. */
export function queuePackages(): string {
  const modules = join(CACHE, 'node_modules');
  const peers = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).peerDependencies as Record<string, string>;
  const wanted = Object.entries(peers).map(([name, range]) => `${name}@${range.replace(/^[\^~]/, '')}`);
  const installed = () => Object.keys(peers).every((name) => existsSync(join(modules, name, 'package.json')));
  if (!installed()) {
    // One install at a time (test files run in parallel): the others wait for it, then find it done.
    mkdirSync(CACHE, { recursive: true });
    execFileSync(
      'flock',
      [
        join(CACHE, '.install.lock'),
        'sh',
        '-c',
        'm=$1; p=$2; shift 2; test -e "$m" || npm install --prefix "$p" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts "$@"',
        'sh',
        join(modules, 'bullmq', 'package.json'),
        CACHE,
        ...wanted,
      ],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
  }
  const paths = (process.env.NODE_PATH ?? '').split(delimiter).filter(Boolean);
  if (!paths.includes(modules)) process.env.NODE_PATH = [modules, ...paths].join(delimiter);
  return modules;
}

/** bullmq itself, for a test that looks into the queue. */
export function requireBullmq(): import('../../../src/core/queue/bull').Bull {
  return require(join(queuePackages(), 'bullmq'));
}
