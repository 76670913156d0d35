// A real Redis server for the queue tests: redis-server from the system (CI installs it, see
// .ci/run), else Debian's packages unpacked under .cache/redis (apt-get download and dpkg -x, no
// root needed), on a free port, in a temporary folder, nothing saved, stopped by stop() or when
// the test process exits. When neither can be had, the suite fails saying what to install.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

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

/** The repository's ignored cache (out/test/unit/queue → the repository's root). */
const CACHE = join(__dirname, '..', '..', '..', '..', '.cache', 'redis');
const PACKAGES = ['redis-server', 'redis-tools', 'libjemalloc2', 'liblzf1'];

/** redis-server and the environment it runs in: the system's, else the cached one (made once). */
function redisBinary(): { command: string; env: NodeJS.ProcessEnv } {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status === 0) return { command: 'redis-server', env: process.env };
  const root = join(CACHE, 'root');
  const command = join(root, 'usr/bin/redis-server');
  if (!existsSync(command)) {
    const debs = join(CACHE, 'debs');
    mkdirSync(debs, { recursive: true });
    const got = spawnSync('apt-get', ['download', ...PACKAGES], { cwd: debs, encoding: 'utf8' });
    if (got.status !== 0)
      throw new Error(
        `redis-server is not installed and Debian's packages could not be downloaded into ${debs} (${got.stderr.trim().split('\n').pop()}): apt-get install -y redis-server (.ci/run does)`,
      );
    for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) execFileSync('dpkg', ['-x', join(debs, deb), root]);
  }
  // The libraries it needs beside it (usr/lib/<multiarch triplet>/).
  const libs = readdirSync(join(root, 'usr/lib'))
    .filter((d) => d.endsWith('-gnu'))
    .map((d) => join(root, 'usr/lib', d));
  return { command, env: { ...process.env, LD_LIBRARY_PATH: [...libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') } };
}

export async function startRedis(): Promise<RedisServer> {
  const redis = redisBinary();
  const port = await freePort();
  const dir = tempDir('launchpad-redis-');
  const password = `pw${randomBytes(8).toString('hex')}`;
  const child: ChildProcess = spawn(
    redis.command,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--requirepass', password],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: redis.env,
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
