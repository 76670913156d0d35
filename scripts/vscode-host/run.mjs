#!/usr/bin/env node
// Runs an extension's integration tests inside a real VS Code host, offline: code-server (VS Code
// server with a Node extension host) opened by headless Debian chromium through playwright-core.
// See README.md beside this file; `node scripts/vscode-host/run.mjs --help` lists the options.
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { chromium } from 'playwright-core';

import { CACHE, ensureInstalled, ROOT } from './install.mjs';

/** The file a test writes in the screenshot folder to have the editor closed (test/vscode/host.ts). */
const CLOSE_EDITOR_REQUEST = 'close-editor.request';

/** The newest screenshot of each suite and name, kept across runs. */
const SCREENSHOTS = join(ROOT, '.cache', 'screenshots');
import { killGroup, rssKb, runPids, startGroup } from './procs.mjs';

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
  --timeout SECONDS     hard limit for the whole run (default: 1200)
  --after-close FILE    module exporting async afterClose(workspace): when the tests ask the runner
                        to close the editor (test/vscode/host.ts requestEditorClose), the browser and
                        code-server are killed and afterClose checks what goes on without them; the
                        test results it returns are the run's
  --label WORD          prefix of the closing line, for several runs in one log`;

export function parseArgs(argv) {
  const o = { extensionPath: ROOT, tests: join(ROOT, 'out/test/vscode/index.js'), suite: 'trusted', trust: true, env: {}, timeout: 1200 };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case '--extension-path':
        o.extensionPath = value();
        break;
      case '--tests':
        o.tests = value();
        break;
      case '--suite':
        o.suite = value();
        break;
      case '--workspace':
        o.workspace = value();
        break;
      case '--setup':
        o.setup = value();
        break;
      case '--trust': {
        const v = value();
        if (v !== 'on' && v !== 'off') throw new Error('--trust takes on or off');
        o.trust = v === 'on';
        break;
      }
      case '--vsix':
        o.vsix = value();
        break;
      case '--screenshot':
        o.screenshot = value();
        break;
      case '--env': {
        const [k, ...v] = value().split('=');
        if (!k || v.length === 0) throw new Error('--env takes KEY=VALUE');
        o.env[k] = v.join('=');
        break;
      }
      case '--grep':
        o.env.HOST_TEST_GREP = value();
        break;
      case '--timeout':
        o.timeout = Number(value());
        if (!(o.timeout > 0)) throw new Error('--timeout takes seconds');
        break;
      case '--label':
        o.label = value();
        break;
      case '--after-close':
        o.afterClose = value();
        break;
      case '-h':
      case '--help':
        console.log(HELP);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown option ${flag}\n${HELP}`);
    }
  }
  return o;
}

// Workbench settings that keep pop-ups and network lookups out of the tests and the screenshots.
const USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true, // else an agent host waits for a GitHub sign-in
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'security.workspace.trust.startupPrompt': 'never', // Restricted Mode without a modal over it
};

/** Runs in the page: the visible text of the workbench's parts (lists render only the rows in view). */
const SCREEN_TEXT = () =>
  Object.fromEntries(
    ['sidebar', 'editor', 'panel', 'statusbar'].map((part) => [part, document.querySelector(`.part.${part}`)?.innerText ?? '']),
  );

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--remote-debugging-address=127.0.0.1',
  '--remote-debugging-port=0',
  '--window-size=1400,900',
];

// On a signal every active run is aborted (it cleans up and reports), then the process exits.
const activeRuns = new Set();
export let interruptedExitCode; // set once a signal arrived: nothing may exit 0 after it
let signalsHooked = false;
function hookSignals() {
  if (signalsHooked) return;
  signalsHooked = true;
  for (const [sig, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ]) {
    process.on(sig, async () => {
      interruptedExitCode ??= code;
      const runs = [...activeRuns];
      runs.forEach((r) => r.abort(new Error(`interrupted by ${sig}`)));
      await Promise.allSettled(runs.map((r) => r.done));
      process.exit(code);
    });
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer()
      .once('error', rej)
      .listen(0, '127.0.0.1', () => {
        const { port } = srv.address();
        srv.close(() => res(port));
      });
  });
}

const exited = (child) =>
  new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) res(child.signalCode ?? child.exitCode);
    else child.on('exit', (code, sig) => res(sig ?? code));
  });

async function waitHealthy(url, server, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error('code-server exited during startup');
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
  }
  throw new Error(`code-server not healthy after ${ms} ms (${url})`);
}

function devToolsUrl(browserProc, ms) {
  return Promise.race([
    new Promise((res) =>
      browserProc.on('line', (l) => {
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(l);
        if (m) res(m[1]);
      }),
    ),
    exited(browserProc).then((c) => {
      throw new Error(`chromium exited during startup (${c})`);
    }),
    sleep(ms).then(() => {
      throw new Error('chromium printed no DevTools endpoint');
    }),
  ]);
}

/** printf-style console args as devtools would show them (%c styles dropped). */
function formatConsole(args) {
  if (typeof args[0] !== 'string') return args.map((a) => JSON.stringify(a)).join(' ');
  let i = 1;
  const head = args[0].replace(/%[csdifoOj%]/g, (m) =>
    m === '%%' ? '%' : m === '%c' ? (i++, '') : i < args.length ? String(args[i++]) : m,
  );
  const rest = args.slice(i);
  // VS Code forwards the extension host's console as ('%c INFO', style, ...the original args).
  const tail =
    typeof rest[0] === 'string' && rest[0].includes('%')
      ? [formatConsole(rest)]
      : rest.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)));
  return [head, ...tail].join(' ').trim();
}

/** Keeps the newest `keep` run folders: each holds a browser profile of some tens of MB. */
function pruneRuns(runsDir, keep) {
  const runs = existsSync(runsDir) ? readdirSync(runsDir).sort() : [];
  for (const old of runs.slice(0, Math.max(0, runs.length - keep))) rmSync(join(runsDir, old), { recursive: true, force: true });
}

/**
 * One host run: prints each test and the closing `N passed, N failed` line.
 * Returns { ok, passed, failed, tests, runDir, logFile, exitCode, error }.
 */
export async function runSuite(opts) {
  const started = Date.now();
  const tests = resolve(opts.tests);
  if (!existsSync(tests)) throw new Error(`tests index ${tests} not found: build first (node esbuild.mjs)`);
  const paths = ensureInstalled();

  // The run folder: log, results, screenshots, and every bit of state the host and browser keep.
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  const runId = `${stamp}-${opts.label ?? opts.suite}-${randomBytes(3).toString('hex')}`;
  pruneRuns(join(CACHE, 'runs'), 8);
  const runDir = join(CACHE, 'runs', runId);
  const dir = (...p) => {
    const d = join(runDir, ...p);
    mkdirSync(d, { recursive: true });
    return d;
  };
  const logFile = join(dir(), 'run.log');
  const logStream = createWriteStream(logFile);
  const elapsed = () => ((Date.now() - started) / 1000).toFixed(1);
  const log = (line) => {
    if (!logStream.writableEnded) logStream.write(`${elapsed().padStart(5)} ${line}\n`);
  };
  const say = (line) => {
    console.log(`vscode-host: ${line}`);
    log(`[runner] ${line}`);
  };
  const resultsFile = join(runDir, 'results.json');
  const shotsDir = dir('screenshots');
  mkdirSync(SCREENSHOTS, { recursive: true });
  const extensionsDir = dir('extensions');
  const userDataDir = dir('user-data');
  writeFileSync(join(dir('user-data', 'User'), 'settings.json'), JSON.stringify(USER_SETTINGS, null, 2));
  // TMPDIR must be short: chromium and VS Code put unix sockets there (108-byte path limit), so a
  // short link in the system temp dir points at the run folder's tmp/ (removed in cleanup).
  const tmpLink = join(tmpdir(), `vscode-host-${runId.slice(-6)}`);
  symlinkSync(dir('tmp'), tmpLink);

  const env = {
    ...process.env,
    PATH: `${join(paths.nodeDir, 'bin')}:${process.env.PATH}`,
    XDG_CONFIG_HOME: dir('xdg', 'config'),
    XDG_DATA_HOME: dir('xdg', 'data'),
    XDG_CACHE_HOME: dir('xdg', 'cache'),
    TMPDIR: tmpLink,
    EXTENSIONS_GALLERY: '{}', // no marketplace: nothing to reach offline, no lookups
    HOST_TEST_RUN_ID: runId,
    HOST_TEST_RESULTS: resultsFile,
    HOST_TEST_SUITE: opts.suite,
    HOST_TEST_SCREENSHOT_DIR: shotsDir,
    ...opts.env,
  };
  delete env.NODE_OPTIONS; // the caller's node flags are not for code-server's Node 24
  delete env.ELECTRON_RUN_AS_NODE;

  // Every process goes through start(); after cleanup began, nothing new may start.
  const children = [];
  let stopped = false;
  const start = (name, cmd, args) => {
    if (stopped) throw new Error('run stopped');
    const child = startGroup(name, cmd, args, { env, log });
    children.push(child);
    return child;
  };
  let browser;
  const hostErrors = []; // shown when the tests could not even report
  const cleanup = async () => {
    stopped = true;
    await browser?.close().catch(() => {});
    await Promise.all(children.map((c) => killGroup(c, log)));
    const strays = runPids(runId);
    for (const pid of strays)
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    if (strays.length) log(`[runner] killed ${strays.length} process(es) that had left their group: ${strays.join(' ')}`);
    rmSync(tmpLink, { force: true });
  };

  let peak = { kb: 0, procs: 0 };
  const sampler = setInterval(() => {
    const procs = runPids(runId);
    const kb = procs.reduce((sum, pid) => sum + rssKb(pid), 0);
    if (kb > peak.kb) peak = { kb, procs: procs.length };
  }, 500);

  // The host run itself; resolves to the exit code the workbench reports for the tests.
  const host = async () => {
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
    let extensionPath = resolve(opts.extensionPath);
    env.HOST_TEST_EXTENSION_ROOT = extensionPath; // where the extension under test must load from
    if (opts.vsix) {
      // Test the installed copy, as a user gets it. extensionTestsPath still needs a development
      // extension to hang off, so a tiny empty one stands in; the tests find the real one by id.
      say(`installing ${opts.vsix}`);
      const code = await exited(
        start('install-extension', paths.nodeBin, [...csArgs, '--install-extension', resolve(opts.vsix), '--force']),
      );
      if (code !== 0) throw new Error(`installing ${opts.vsix} failed (${code})`);
      extensionPath = dir('probe-extension');
      writeFileSync(
        join(extensionPath, 'package.json'),
        JSON.stringify({
          name: 'host-test-probe',
          publisher: 'vscode-host',
          version: '0.0.0',
          engines: { vscode: '*' },
          capabilities: { untrustedWorkspaces: { supported: true } }, // so --trust off works here too
        }),
      );
      env.HOST_TEST_EXTENSION_ROOT = extensionsDir;
      env.HOST_TEST_VSIX = resolve(opts.vsix); // so a test can list what the package holds
    }

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = start('code-server', paths.nodeBin, [
      ...csArgs,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-getting-started-override',
      '--ignore-last-opened',
      ...(opts.trust ? ['--disable-workspace-trust'] : []),
      '--vscode-option',
      'enable-smoke-test-driver', // without it the payload below is ignored
    ]);
    await waitHealthy(`${base}/healthz`, server, 30_000);
    say(`code-server ready on ${base} (${opts.trust ? 'trusted' : 'Restricted Mode'})`);

    const chrome = start('chromium', paths.chromium, [...CHROMIUM_FLAGS, `--user-data-dir=${dir('browser-profile')}`, 'about:blank']);
    browser = await chromium.connectOverCDP(await devToolsUrl(chrome, 30_000));
    const context = browser.contexts()[0];
    const page = context.pages()[0] ?? (await context.newPage());
    await page.setViewportSize({ width: 1400, height: 900 });
    // One chain keeps the order: printf-style messages (mocha's) need their args fetched first.
    let consoleChain = Promise.resolve();
    page.on('console', (m) => {
      consoleChain = consoleChain
        .then(async () => (m.text().includes('%') ? formatConsole(await Promise.all(m.args().map((a) => a.jsonValue()))) : m.text()))
        .catch(() => m.text())
        .then((text) => {
          log(`[browser:${m.type()}] ${text}`);
          if (m.type() === 'error' && /\bError\b/.test(text)) hostErrors.push(text.split('\n')[0]);
        });
    });
    page.on('pageerror', (e) => log(`[browser:pageerror] ${e.stack ?? e}`));
    // The workbench calls this when the tests are done (smoke-test-driver contract).
    let testsExited;
    const testsDone = new Promise((res) => {
      testsExited = res;
    });
    await page.exposeFunction('codeAutomationExit', (code) => testsExited(code));

    const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
    const url = new URL(base);
    url.searchParams.set('folder', workspace);
    url.searchParams.set(
      'payload',
      JSON.stringify([
        ['extensionDevelopmentPath', remote(extensionPath)],
        ['extensionTestsPath', remote(tests)],
      ]),
    );
    say(`opening ${workspace}`);
    await page.goto(url.href);

    // The editor closed as a person quits it (test/vscode/host.ts requestEditorClose): the browser
    // and code-server's whole process group killed, nothing else; then afterClose checks what goes
    // on without them, and its results are the run's.
    let editorClosed;
    const closeEditor = async () => {
      say('closing the editor as the tests asked: the browser and code-server are killed');
      await browser.close().catch(() => {});
      await Promise.all([chrome, server].map((c) => killGroup(c, log)));
      if (!opts.afterClose) throw new Error('the tests asked to close the editor, but no --after-close module checks what follows');
      const mod = await import(pathToFileURL(resolve(opts.afterClose)).href);
      const tests = await mod.afterClose(workspace, (line) => log(`[after-close] ${line}`));
      const count = (state) => tests.filter((t) => t.state === state).length;
      writeFileSync(
        resultsFile,
        JSON.stringify({ suite: opts.suite, passed: count('passed'), failed: count('failed'), pending: count('pending'), tests }, null, 2),
      );
      return count('failed') ? 1 : 0;
    };

    // Screenshots the tests ask for (test/vscode/host.ts): NAME.request appears; NAME.png, then NAME.done.
    const shooter = setInterval(async () => {
      if (!editorClosed && existsSync(join(shotsDir, CLOSE_EDITOR_REQUEST))) {
        editorClosed = closeEditor().then(testsExited, (e) => {
          log(`[runner] after-close: ${e.stack ?? e}`);
          testsExited(1);
        });
        return;
      }
      if (editorClosed) return;
      for (const f of readdirSync(shotsDir).filter((n) => n.endsWith('.request'))) {
        const name = join(shotsDir, f.slice(0, -'.request'.length));
        renameSync(join(shotsDir, f), `${name}.taking`);
        // The picture, and the text a person reads in each part of the workbench, for the test to
        // check. They must agree: when the text changed while the picture was taken (a status-bar
        // message coming or going), it is taken again, up to three times.
        const read = () => page.evaluate(SCREEN_TEXT).catch((e) => ({ error: String(e) }));
        let text = await read();
        for (let tries = 1; ; tries++) {
          const before = JSON.stringify(text);
          await page.screenshot({ path: `${name}.png` }).catch((e) => log(`[runner] screenshot failed: ${e}`));
          text = await read();
          if (JSON.stringify(text) === before || tries === 3) break;
        }
        writeFileSync(`${name}.json`, JSON.stringify(text, null, 2));
        writeFileSync(`${name}.done`, '');
        // Run folders are pruned; the newest picture of each name stays where a person looks.
        const kept = join(SCREENSHOTS, `${opts.label ?? opts.suite}-${f.slice(0, -'.request'.length)}.png`);
        if (existsSync(`${name}.png`)) copyFileSync(`${name}.png`, kept);
        say(`screenshot ${kept}`);
      }
    }, 250);
    let code;
    try {
      code = await Promise.race([
        testsDone,
        exited(server).then((c) => {
          // Killed on the tests' request: the check after it decides.
          if (editorClosed) return testsDone;
          throw new Error(`code-server exited (${c})`);
        }),
      ]);
    } finally {
      clearInterval(shooter);
    }
    log(`[runner] the tests exited with ${code}`);
    if (opts.screenshot && !editorClosed) {
      await sleep(500); // let the last refresh paint
      mkdirSync(resolve(opts.screenshot, '..'), { recursive: true });
      await page.screenshot({ path: resolve(opts.screenshot) });
      say(`screenshot ${resolve(opts.screenshot)}`);
    }
    return code;
  };

  const run = {};
  run.done = new Promise((r) => {
    run.finished = r;
  });
  activeRuns.add(run);
  hookSignals();
  let timer;
  let exitCode;
  let error;
  try {
    const stop = new Promise((_, rej) => {
      run.abort = rej;
      timer = setTimeout(() => rej(new Error(`timed out after ${opts.timeout} s`)), opts.timeout * 1000);
    });
    exitCode = await Promise.race([stop, host()]);
  } catch (e) {
    error = e;
    log(`[runner] error: ${e.stack ?? e}`);
  } finally {
    clearTimeout(timer);
    clearInterval(sampler);
    await cleanup();
  }

  // The report: the index's result file is the truth; the exit code must agree with it.
  let results;
  try {
    results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  } catch {
    /* none written */
  }
  const list = results?.tests ?? [];
  for (const r of list) {
    console.log(
      `  ${{ passed: 'ok  ', failed: 'FAIL' }[r.state] ?? 'skip'} ${r.title}${r.durationMs != null ? ` (${r.durationMs} ms)` : ''}`,
    );
    if (r.state === 'failed' && r.error)
      console.log(`       ${(r.error.stack ?? r.error.message).split('\n').slice(0, 8).join('\n       ')}`);
  }
  const passed = list.filter((r) => r.state === 'passed').length;
  const failed = list.filter((r) => r.state === 'failed').length;
  const ok = !error && exitCode === 0 && failed === 0 && passed > 0;
  if (error) say(error.message);
  else if (!results)
    say(
      `the tests wrote no ${resultsFile} (exit code ${exitCode})${hostErrors
        .slice(0, 3)
        .map((e) => `\n  ${e}`)
        .join('')}`,
    );
  else if (passed + failed === 0) say('no test ran');
  else if (exitCode !== 0 && failed === 0) say(`the tests exited with ${exitCode}`);
  say(`${elapsed()} s, peak ${Math.round(peak.kb / 1024)} MB in ${peak.procs} processes${ok ? '' : `; log: ${logFile}`}`);
  console.log(`${opts.label ? `${opts.label}: ` : ''}${passed} passed, ${failed} failed`);
  await new Promise((r) => logStream.end(r));
  activeRuns.delete(run);
  run.finished();
  return { ok, passed, failed, tests: list, runDir, logFile, exitCode, error };
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
    (r) => process.exit(interruptedExitCode ?? (r.ok ? 0 : 1)),
    (e) => {
      console.error(`vscode-host: ${e.message}`);
      process.exit(1);
    },
  );
}
