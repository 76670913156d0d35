// A real Redis server for the queue tests: redis-server from the system (CI installs it, see
// .ci/run), else Debian's packages unpacked under .cache/redis (apt-get download and dpkg -x, no
// root needed), on a free port, in a temporary folder, nothing saved unless asked (AOF, fsync
// every second), stopped by stop() or when the test process exits. restart() kills it (SIGKILL)
// and starts it again on the same port, with what it had saved. When neither can be had, the
// suite fails saying what to install.
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

export interface RedisOptions {
  /** Keep the data across a restart: appendonly yes, appendfsync everysec. */
  persistent?: boolean;
}

export async function startRedis(opts: RedisOptions = {}): Promise<RedisServer & { restart(): Promise<void>; kill(): Promise<void> }> {
  const redis = redisBinary();
  const port = await freePort();
  const dir = tempDir('launchpad-redis-');
  const password = `pw${randomBytes(8).toString('hex')}`;
  const persistence = opts.persistent ? ['--appendonly', 'yes', '--appendfsync', 'everysec'] : ['--appendonly', 'no'];
  let child: ChildProcess | undefined;
  const kill = () => child?.exitCode === null && child.signalCode === null && child.kill('SIGKILL');
  process.once('exit', kill);
  const start = async () => {
    const c = spawn(
      redis.command,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir, '--requirepass', password],
      { stdio: ['ignore', 'pipe', 'pipe'], env: redis.env },
    );
    child = c;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${out}`)), 10_000);
      c.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      c.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}:\n${out}`));
      });
    });
    c.stdout!.resume();
  };
  const ended = () =>
    new Promise<void>((resolve) => {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
    });
  await start();
  return {
    url: `redis://:${password}@127.0.0.1:${port}`,
    password,
    port,
    stop: async () => {
      const gone = ended();
      if (child?.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(kill, 3000);
      await gone;
      clearTimeout(timer);
      process.off('exit', kill);
    },
    kill: async () => {
      const gone = ended();
      kill();
      await gone;
    },
    restart: async () => {
      const gone = ended();
      kill();
      await gone;
      await start();
    },
  };
}
