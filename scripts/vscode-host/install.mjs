#!/usr/bin/env node
// Installs the offline VS Code host (see README.md beside this file): Debian chromium, Node 24 and
// code-server from npm into .cache/vscode-host/. Idempotent: a stamp records what is installed,
// so a warm run only checks a few files. Never trusts the cache to exist: from nothing it installs all.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const NODE_VERSION = '24.21.0'; // code-server 4.139.x refuses any other major
export const CODE_SERVER_VERSION = '4.139.1'; // = VS Code 1.139.1
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CACHE = join(ROOT, '.cache', 'vscode-host');
export const CHROMIUM = '/usr/bin/chromium';

const platformPkg = `node-${process.platform}-${process.arch}`;
const stampFile = join(CACHE, 'stamp.json');
const logFile = join(CACHE, 'install.log');
const wanted = { node: NODE_VERSION, codeServer: CODE_SERVER_VERSION, platform: platformPkg };

/** Where everything lives once installed. */
export function hostPaths(cache = CACHE) {
  const nodeDir = join(cache, 'node', 'node_modules', 'node', 'node_modules', platformPkg);
  return {
    nodeDir, // also the headers dir that node-gyp needs (npm_config_nodedir)
    nodeBin: join(nodeDir, 'bin', 'node'),
    codeServerEntry: join(cache, 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    chromium: CHROMIUM,
  };
}

class InstallError extends Error {}

function run(cmd, args, opts = {}) {
  appendFileSync(logFile, `\n$ ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
  appendFileSync(logFile, (r.stdout ?? '') + (r.stderr ?? ''));
  if (r.status !== 0) {
    const tail = `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim().split('\n').slice(-15).join('\n');
    throw new InstallError(`\`${cmd} ${args.join(' ')}\` failed (exit ${r.status}):\n${tail}\nfull log: ${logFile}`);
  }
  return r.stdout;
}

const dpkgInstalled = (pkg) => spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout === 'install ok installed';

function aptInstall(pkgs, log) {
  const missing = pkgs.filter((p) => !dpkgInstalled(p));
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new InstallError(
      `missing Debian packages: ${missing.join(' ')}. Run as root, or: sudo apt-get update && sudo apt-get install -y ${missing.join(' ')}`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  log(`apt-get update (to install ${missing.join(', ')})`);
  run('apt-get', ['update'], { env });
  log(`apt-get install -y ${missing.join(' ')}`);
  run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
}

function readStamp() {
  try {
    return JSON.parse(readFileSync(stampFile, 'utf8'));
  } catch {
    return {};
  }
}

/** Installs whatever is missing; returns hostPaths(). Fast no-op when the stamp matches. */
export function ensureInstalled({ log = (m) => console.log(`vscode-host: ${m}`) } = {}) {
  const paths = hostPaths();
  const stamp = readStamp();
  const stampOk = Object.entries(wanted).every(([k, v]) => stamp[k] === v);
  if (stampOk && existsSync(paths.nodeBin) && existsSync(paths.codeServerEntry) && existsSync(CHROMIUM)) {
    log(`ready: code-server ${CODE_SERVER_VERSION}, node ${NODE_VERSION}, ${CHROMIUM}`);
    return paths;
  }
  const started = Date.now();
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(logFile, `install started ${new Date().toISOString()}\n`);
  // chromium runs the workbench; libkrb5-dev lets code-server's `kerberos` module build from source.
  aptInstall(['chromium', 'libkrb5-dev'], log);
  if (!existsSync(CHROMIUM)) throw new InstallError(`${CHROMIUM} is still missing after apt-get install chromium`);

  rmSync(stampFile, { force: true }); // a half-finished install never looks complete
  const npmOpts = { cwd: CACHE };
  if (stamp.node !== NODE_VERSION || stamp.platform !== platformPkg || !existsSync(paths.nodeBin)) {
    log(`npm install node@${NODE_VERSION} into ${join(CACHE, 'node')}`);
    rmSync(join(CACHE, 'node'), { recursive: true, force: true });
    run('npm', ['install', '--prefix', join(CACHE, 'node'), '--no-save', '--no-audit', '--no-fund', `node@${NODE_VERSION}`], npmOpts);
    if (!existsSync(paths.nodeBin)) throw new InstallError(`node@${NODE_VERSION} installed but ${paths.nodeBin} is missing`);
  }
  const version = run(paths.nodeBin, ['--version']).trim();
  if (version !== `v${NODE_VERSION}`) throw new InstallError(`${paths.nodeBin} reports ${version}, wanted v${NODE_VERSION}`);

  if (stamp.codeServer !== CODE_SERVER_VERSION || stamp.node !== NODE_VERSION || !existsSync(paths.codeServerEntry)) {
    log(`npm install code-server@${CODE_SERVER_VERSION} into ${join(CACHE, 'code-server')} (about a minute, ~800 MB)`);
    rmSync(join(CACHE, 'code-server'), { recursive: true, force: true });
    // Node 24 first on PATH runs npm and the postinstall; node-gyp must build against its headers,
    // not the machine's Node 20 (npmrc here says nodedir=/usr).
    // Under `npm test` the outer npm's npm_* variables are inherited, and npm reads npm_config_*
    // as its own config: code-server's postinstall would see the outer user agent (node/v20) and
    // refuse. The inner npm gets none of them.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const env = { ...inherited, PATH: `${join(paths.nodeDir, 'bin')}:${process.env.PATH}`, npm_config_nodedir: paths.nodeDir };
    run(
      'npm',
      ['install', '--prefix', join(CACHE, 'code-server'), '--no-save', '--no-audit', '--no-fund', `code-server@${CODE_SERVER_VERSION}`],
      { ...npmOpts, env },
    );
    if (!existsSync(paths.codeServerEntry)) throw new InstallError(`code-server installed but ${paths.codeServerEntry} is missing`);
  }
  writeFileSync(stampFile, JSON.stringify({ ...wanted, installedAt: new Date().toISOString() }, null, 2) + '\n');
  log(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s (log: ${logFile})`);
  return paths;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    ensureInstalled();
  } catch (e) {
    console.error(`vscode-host install failed: ${e instanceof InstallError ? e.message : (e?.stack ?? e)}`);
    process.exit(1);
  }
}
