#!/usr/bin/env node
// Runs an extension's integration tests inside a real VS Code host, offline: code-server (VS Code
// server with a Node extension host) opened by headless Debian chromium through playwright-core.
// See README.md beside this file; `node scripts/vscode-host/run.mjs --help` lists the options.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';
import { CACHE, ROOT, ensureInstalled } from './install.mjs';

const HELP = `usage: node scripts/vscode-host/run.mjs [options]
  --extension-path DIR  extensionDevelopmentPath (default: repo root)
  --tests FILE          the tests' index, extensionTestsPath (default: out/test/vscode/index.js)
  --suite NAME          which suite the index runs, as HOST_TEST_SUITE (default: trusted)
  --workspace DIR       folder to open, used as it is
  --setup FILE          module exporting async setup(dir): fills a fresh folder, which is then opened
  --trust on|off        off starts without --disable-workspace-trust: Restricted Mode (default: on)
  --vsix FILE           install this .vsix and test the installed copy instead of the dev folder
  --screenshot FILE     PNG of the workbench once the tests are done
  --env KEY=VALUE       extra environment for the extension host (repeatable)
  --grep TEXT           only tests whose full title contains TEXT (HOST_TEST_GREP)
  --timeout SECONDS     hard limit for the whole run (default: 300)
  --label WORD          prefix of the closing line, for several runs in one log`;

export function parseArgs(argv) {
  const o = { extensionPath: ROOT, tests: 'out/test/vscode/index.js', suite: 'trusted', trust: true, env: {}, timeout: 300 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case '--extension-path': o.extensionPath = value(); break;
      case '--tests': o.tests = value(); break;
      case '--suite': o.suite = value(); break;
      case '--workspace': o.workspace = value(); break;
      case '--setup': o.setup = value(); break;
      case '--trust': { const v = value(); if (!['on', 'off'].includes(v)) throw new Error('--trust takes on or off'); o.trust = v === 'on'; break; }
      case '--vsix': o.vsix = value(); break;
      case '--screenshot': o.screenshot = value(); break;
      case '--env': { const [k, ...v] = value().split('='); if (!k || v.length === 0) throw new Error('--env takes KEY=VALUE'); o.env[k] = v.join('='); break; }
      case '--grep': o.env.HOST_TEST_GREP = value(); break;
      case '--timeout': o.timeout = Number(value()); if (!(o.timeout > 0)) throw new Error('--timeout takes seconds'); break;
      case '--label': o.label = value(); break;
      case '-h': case '--help': console.log(HELP); process.exit(0); break;
      default: throw new Error(`unknown option ${flag}\n${HELP}`);
    }
  }
  return o;
}

// ---- processes: each in its own group, all marked with the run id so none can escape cleanup ----

/** Starts a command as leader of a new process group; its output goes to the run log. */
function startGroup(name, cmd, args, { env, log }) {
  const child = spawn(cmd, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (d) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop();
      for (const line of lines) log(`[${name}] ${line}`);
      child.emit('lines', lines);
    });
  }
  child.on('exit', (code, sig) => log(`[runner] ${name} (pid ${child.pid}) exited: ${sig ?? code}`));
  return child;
}

const groupAlive = (pgid) => { try { process.kill(-pgid, 0); return true; } catch { return false; } };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM the whole group, SIGKILL it if anything is left after a grace period. */
async function killGroup(child, log, graceMs = 3000) {
  if (!child?.pid) return;
  try { process.kill(-child.pid, 'SIGTERM'); } catch { return; }
  const t0 = Date.now();
  while (Date.now() - t0 < graceMs && groupAlive(child.pid)) { await sleep(300); log('DEBUG ' + (await import('node:child_process')).execSync(`ps -o pid,stat,etime,args -g ${child.pid} | cut -c1-120`)); }
  log(`[runner] group ${child.pid}: ${Date.now() - t0} ms after SIGTERM`);
  try { process.kill(-child.pid, 'SIGKILL'); log(`[runner] process group ${child.pid} outlived SIGTERM: SIGKILL`); } catch { /* gone */ }
}

/** printf-style console args (%c styles dropped), as the browser's devtools would show them. */
function formatConsole(args) {
  if (typeof args[0] !== 'string') return args.map(String).join(' ');
  let i = 1;
  const head = args[0].replace(/%[csdifoOj%]/g, (m) => (m === '%%' ? '%' : m === '%c' ? (i++, '') : i < args.length ? String(args[i++]) : m));
  const rest = args.slice(i);
  // VS Code forwards the extension host's console as ('%c INFO', style, ...the original args).
  const tail = typeof rest[0] === 'string' && rest[0].includes('%') ? [formatConsole(rest)] : rest.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)));
  return [head, ...tail].join(' ').trim();
}

/** Pids of every live process carrying HOST_TEST_RUN_ID=runId (children that left their group too). */
function runPids(runId) {
  const marker = `HOST_TEST_RUN_ID=${runId}\0`;
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try { if (readFileSync(`/proc/${name}/environ`, 'latin1').includes(marker)) pids.push(Number(name)); } catch { /* gone or not ours */ }
  }
  return pids;
}

const rssKb = (pid) => { try { return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0); } catch { return 0; } };

// ---- helpers ----

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer().once('error', rej).listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

async function waitHealthy(url, server, ms) {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error('code-server exited during startup');
    try { if ((await fetch(url)).ok) return; } catch { /* not listening yet */ }
    await sleep(100);
  }
  throw new Error(`code-server not healthy after ${ms} ms (${url})`);
}

function waitDevTools(browserProc, ms) {
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error('chromium printed no DevTools endpoint')), ms);
    browserProc.on('lines', (lines) => {
      for (const l of lines) {
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(l);
        if (m) { clearTimeout(timer); res(m[1]); }
      }
    });
    browserProc.on('exit', () => { clearTimeout(timer); rej(new Error('chromium exited during startup')); });
  });
}

function runChecked(cmd, args, env, log) {
  return new Promise((res, rej) => {
    const child = startGroup('install-extension', cmd, args, { env, log });
    child.on('exit', (code) => (code === 0 ? res() : rej(new Error(`${cmd} ${args.join(' ')} exited ${code}`))));
  });
}

/** Keeps the newest `keep` run folders: each holds a browser profile of some tens of MB. */
function pruneRuns(runsDir, keep) {
  const runs = existsSync(runsDir) ? readdirSync(runsDir).sort() : [];
  for (const old of runs.slice(0, Math.max(0, runs.length - keep))) rmSync(join(runsDir, old), { recursive: true, force: true });
}

// Workbench settings that keep pop-ups out of the tests and the screenshots.
const USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.startupPrompt': 'never',
  'chat.disableAIFeatures': true, // no chat panel, no agent host waiting for a GitHub sign-in
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

const activeCleanups = new Set();
let signalsHooked = false;
function hookSignals() {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
    process.on(sig, async () => {
      console.error(`\nvscode-host: ${sig}, stopping code-server and chromium`);
      await Promise.allSettled([...activeCleanups].map((c) => c()));
      process.exit(code);
    });
  }
}

/**
 * One host run. Returns { ok, passed, failed, tests, runDir, logFile, exitCode, error }.
 * Prints each test and the closing `N passed, N failed` line.
 */
export async function runSuite(opts) {
  const started = Date.now();
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${opts.label ?? opts.suite}-${randomBytes(3).toString('hex')}`;
  const runsDir = join(CACHE, 'runs');
  pruneRuns(runsDir, 8);
  const runDir = join(runsDir, runId);
  const dir = (...p) => { const d = join(runDir, ...p); mkdirSync(d, { recursive: true }); return d; };
  const logFile = join(runDir, 'run.log');
  dir();
  const logStream = createWriteStream(logFile);
  const t = () => ((Date.now() - started) / 1000).toFixed(1).padStart(5);
  const log = (line) => logStream.write(`${t()} ${line}\n`);
  const say = (line) => { console.log(`vscode-host: ${line}`); log(`[runner] ${line}`); };

  const paths = ensureInstalled({ log: say });
  // TMPDIR must be short: chromium and VS Code put unix sockets there (108-byte path limit), so a
  // short link in the system temp dir points at the run folder's tmp/ (removed in cleanup).
  const tmpLink = join(tmpdir(), `vscode-host-${runId.slice(-6)}`);
  symlinkSync(dir('tmp'), tmpLink);
  const resultsFile = join(runDir, 'results.json');
  const shotsDir = dir('screenshots');
  const extensionsDir = dir('extensions');
  const userDataDir = dir('user-data');
  writeFileSync(join(dir('user-data', 'User'), 'settings.json'), JSON.stringify(USER_SETTINGS, null, 2));
  const tests = resolve(opts.tests);
  if (!existsSync(tests)) throw new Error(`tests index ${tests} not found: build first (node esbuild.mjs)`);

  let extensionPath = resolve(opts.extensionPath);
  let extensionRoot = extensionPath; // where the extension under test must be loaded from
  const env = {
    ...process.env,
    PATH: `${join(paths.nodeDir, 'bin')}:${process.env.PATH}`,
    XDG_CONFIG_HOME: dir('xdg', 'config'),
    XDG_DATA_HOME: dir('xdg', 'data'),
    XDG_CACHE_HOME: dir('xdg', 'cache'),
    TMPDIR: tmpLink,
    EXTENSIONS_GALLERY: '{}', // no marketplace: nothing to reach offline, no lookups per run
    HOST_TEST_RUN_ID: runId,
    HOST_TEST_RESULTS: resultsFile,
    HOST_TEST_SUITE: opts.suite,
    HOST_TEST_SCREENSHOT_DIR: shotsDir,
    ...opts.env,
  };
  delete env.NODE_OPTIONS; // the caller's node flags are not for code-server's Node 24
  delete env.ELECTRON_RUN_AS_NODE;

  const children = [];
  let browser;
  let peak = { kb: 0, procs: 0 };
  const cleanup = async () => {
    activeCleanups.delete(cleanup);
    await browser?.close().catch(() => {});
    await Promise.all(children.map((c) => killGroup(c, log)));
    const strays = runPids(runId);
    for (const pid of strays) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    if (strays.length) log(`[runner] killed ${strays.length} stray process(es) outside the groups: ${strays.join(' ')}`);
    rmSync(tmpLink, { force: true });
  };
  activeCleanups.add(cleanup);
  hookSignals();

  let timer;
  let exitCode;
  let error;
  try {
    const timeout = new Promise((_, rej) => { timer = setTimeout(() => rej(new Error(`timed out after ${opts.timeout} s`)), opts.timeout * 1000); });
    await Promise.race([timeout, (async () => {
      let workspace = opts.workspace && resolve(opts.workspace);
      if (!workspace) {
        workspace = dir('workspace');
        if (opts.setup) {
          const mod = await import(pathToFileURL(resolve(opts.setup)).href);
          const setup = mod.setup ?? mod.default?.setup;
          if (typeof setup !== 'function') throw new Error(`${opts.setup} exports no setup(dir) function`);
          await setup(workspace);
        }
      }
      const csArgs = [paths.codeServerEntry, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir];
      if (opts.vsix) {
        // The installed copy is what a user gets. extensionTestsPath still needs some development
        // extension to hang off, so a tiny empty one stands in; the tests find the real one by id.
        say(`installing ${opts.vsix}`);
        await runChecked(paths.nodeBin, [...csArgs, '--install-extension', resolve(opts.vsix), '--force'], env, log);
        extensionPath = dir('probe-extension');
        writeFileSync(join(extensionPath, 'package.json'), JSON.stringify({
          name: 'host-test-probe', publisher: 'vscode-host', version: '0.0.0', engines: { vscode: '*' },
          capabilities: { untrustedWorkspaces: { supported: true } },
        }));
        extensionRoot = extensionsDir;
      }
      env.HOST_TEST_EXTENSION_ROOT = extensionRoot;

      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const server = startGroup('code-server', paths.nodeBin, [...csArgs,
        '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
        '--disable-getting-started-override', '--ignore-last-opened',
        ...(opts.trust ? ['--disable-workspace-trust'] : []),
        '--vscode-option', 'enable-smoke-test-driver', // needed for the payload below to be honoured
      ], { env, log });
      children.push(server);
      const serverDied = new Promise((_, rej) => server.on('exit', (c, s) => rej(new Error(`code-server exited (${s ?? c})`))));
      serverDied.catch(() => {});
      await waitHealthy(`${base}/healthz`, server, 30_000);
      say(`code-server ready on ${base} (${opts.trust ? 'trusted' : 'Restricted Mode'})`);

      const chrome = startGroup('chromium', paths.chromium, [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
        '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0',
        `--user-data-dir=${dir('browser-profile')}`, '--window-size=1400,900', 'about:blank',
      ], { env, log });
      children.push(chrome);
      browser = await chromium.connectOverCDP(await waitDevTools(chrome, 30_000));
      const page = browser.contexts()[0].pages()[0] ?? await browser.contexts()[0].newPage();
      await page.setViewportSize({ width: 1400, height: 900 });
      // Ordered through one chain because the printf-style ones need their args fetched (mocha's do).
      let consoleChain = Promise.resolve();
      page.on('console', (m) => {
        consoleChain = consoleChain.then(async () => {
          const text = m.text().includes('%') ? formatConsole(await Promise.all(m.args().map((a) => a.jsonValue().catch(() => '?')))) : m.text();
          log(`[browser:${m.type()}] ${text}`);
        }).catch(() => log(`[browser:${m.type()}] ${m.text()}`));
      });
      page.on('pageerror', (e) => log(`[browser:pageerror] ${e.stack ?? e}`));
      let exited;
      const hostExit = new Promise((res) => { exited = res; });
      await page.exposeFunction('codeAutomationExit', (code) => { exited(code); });

      const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
      const url = new URL(base);
      url.searchParams.set('folder', workspace);
      url.searchParams.set('payload', JSON.stringify([['extensionDevelopmentPath', remote(extensionPath)], ['extensionTestsPath', remote(tests)]]));
      say(`opening ${workspace}`);
      await page.goto(url.href);

      // Screenshots the tests ask for: NAME.request appears, NAME.png then NAME.done are written.
      const shoot = setInterval(async () => {
        for (const f of readdirSync(shotsDir).filter((n) => n.endsWith('.request'))) {
          const name = f.slice(0, -'.request'.length);
          renameSync(join(shotsDir, f), join(shotsDir, `${name}.taking`));
          await page.screenshot({ path: join(shotsDir, `${name}.png`) }).catch((e) => log(`[runner] screenshot ${name} failed: ${e}`));
          writeFileSync(join(shotsDir, `${name}.done`), '');
          say(`screenshot ${join(shotsDir, `${name}.png`)}`);
        }
        const procs = runPids(runId);
        const kb = procs.reduce((sum, pid) => sum + rssKb(pid), 0);
        if (kb > peak.kb) peak = { kb, procs: procs.length };
      }, 250);
      try {
        exitCode = await Promise.race([hostExit, serverDied]);
      } finally {
        clearInterval(shoot);
      }
      log(`[runner] extension host tests exited with ${exitCode}`);
      if (opts.screenshot) {
        await sleep(500); // let the last view refresh paint
        await page.screenshot({ path: resolve(opts.screenshot) });
        say(`screenshot ${resolve(opts.screenshot)}`);
      }
    })()]);
  } catch (e) {
    error = e;
    log(`[runner] error: ${e.stack ?? e}`);
  } finally {
    clearTimeout(timer);
    await cleanup();
  }

  let results;
  try { results = JSON.parse(readFileSync(resultsFile, 'utf8')); } catch { /* none written */ }
  const tests_ = results?.tests ?? [];
  for (const r of tests_) {
    const mark = r.state === 'passed' ? 'ok  ' : r.state === 'failed' ? 'FAIL' : 'skip';
    console.log(`  ${mark} ${r.title}${r.durationMs != null ? ` (${r.durationMs} ms)` : ''}`);
    if (r.state === 'failed' && r.error) console.log(`       ${(r.error.stack ?? r.error.message).split('\n').slice(0, 8).join('\n       ')}`);
  }
  const passed = tests_.filter((r) => r.state === 'passed').length;
  const failed = tests_.filter((r) => r.state === 'failed').length;
  const ok = !error && exitCode === 0 && failed === 0 && passed > 0;
  if (error) console.log(`vscode-host: ${error.message}`);
  else if (!results) console.log(`vscode-host: the tests wrote no ${resultsFile} (host exit code ${exitCode})`);
  else if (passed === 0 && failed === 0) console.log('vscode-host: no test ran');
  else if (exitCode !== 0 && failed === 0) console.log(`vscode-host: the host exited with ${exitCode}`);
  log(`[runner] peak memory ${Math.round(peak.kb / 1024)} MB across ${peak.procs} processes; ${t()} s`);
  console.log(`vscode-host: ${((Date.now() - started) / 1000).toFixed(1)} s, peak ${Math.round(peak.kb / 1024)} MB in ${peak.procs} processes${ok ? '' : `; log: ${logFile}`}`);
  console.log(`${opts.label ? `${opts.label}: ` : ''}${passed} passed, ${failed} failed`);
  await new Promise((r) => logStream.end(r));
  return { ok, passed, failed, tests: tests_, runDir, logFile, exitCode, error };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`vscode-host: ${e.message}`);
    process.exit(2);
  }
  runSuite(opts).then(
    (r) => process.exit(r.ok ? 0 : 1),
    (e) => { console.error(`vscode-host: ${e.stack ?? e}`); process.exit(1); },
  );
}
