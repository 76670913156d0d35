// The codex preset with the real OpenAI Codex CLI (the version the preset's `proven` names),
// pointed by a config.toml in its own CODEX_HOME at the scripted model server speaking the
// Responses API. Each scenario is one `launchpad run`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { CLI_COPY, git, launchpad, linesOf, show, taskById } from '../unit/controller/support';
import { type ModelServer, type Script, startModelServer } from './modelServer';
import type { Protocol } from './protocol';
import { openaiResponses } from './protocols/openaiResponses';
import { agentReport, dagHarness, dagScript, doTask, TASKS, toolEnv } from './rig';

// A zone that is not UTC, so a wall-clock reset read in the wrong zone is hours off.
const TZ = 'America/New_York';

/**
 * The tool's environment: a CODEX_HOME whose config.toml names the server as the model
 * provider (no login: the key comes from OPENAI_API_KEY), no update check or analytics, and no
 * retries of its own, so a fault ends the turn at once instead of after minutes of back-off.
 */
function codexEnv(server: ModelServer): NodeJS.ProcessEnv {
  const env = toolEnv('codex', { OPENAI_API_KEY: 'sk-launchpad-test', TZ });
  const codexHome = join(env.HOME!, '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      // A model codex knows the metadata of: with an unknown one it offers no apply_patch tool.
      'model = "gpt-5.5"',
      'model_provider = "launchpad-test"',
      'check_for_update_on_startup = false',
      '[analytics]',
      'enabled = false',
      '[feedback]',
      'enabled = false',
      '[model_providers.launchpad-test]',
      'name = "Launchpad test server"',
      `base_url = "${server.url}/v1"`,
      'wire_api = "responses"',
      'env_key = "OPENAI_API_KEY"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'),
  );
  return { ...env, CODEX_HOME: codexHome };
}

const [alpha] = TASKS;
const TASK = alpha!;

/** The server's sums for a task, as agent.json must hold them. */
function expectedTokens(server: ModelServer, title: string): Record<string, number> {
  const u = server.usageOf(title);
  return { input: u.input + u.cacheRead, cache_read: u.cacheRead, output: u.output, reasoning: 0 };
}

/** The next wall-clock minute at least `leadMs` ahead: codex prints a reset to the minute. */
function minuteAhead(leadMs: number): Date {
  const t = new Date(Date.now() + leadMs);
  t.setUTCSeconds(0, 0);
  return new Date(t.getTime() + 60_000);
}

/** A 429 as ChatGPT's backend answers a used-up plan, resetting at `reset`. */
function usageLimit(reset: Date, times = 1): Script[string][number] {
  const at = String(Math.floor(reset.getTime() / 1000));
  return {
    kind: 'fault',
    status: 429,
    message: 'The usage limit has been reached',
    headers: { 'x-codex-primary-used-percent': '100', 'x-codex-primary-window-minutes': '300', 'x-codex-primary-reset-at': at },
    times,
  };
}

/** `codex exec` as a person runs it in `cwd`, ended after `timeoutMs`. */
function codexExec(cwd: string, env: NodeJS.ProcessEnv, args: string[], prompt: string, timeoutMs = 60_000) {
  return new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn('codex', ['exec', '--json', ...args, '-'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    child.stdin.end(prompt);
  });
}

describe('codex (the real CLI against the Responses API)', function () {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function serve(script: Script, protocol: Protocol = openaiResponses): Promise<ModelServer> {
    server = await startModelServer([protocol], script);
    return server;
  }

  function unknownRequests(s: ModelServer): string {
    return JSON.stringify(s.unknown.map((u) => `${u.method} ${u.url}`));
  }

  it('runs the DAG to the base branch, with each attempt reporting the tokens the server gave', async () => {
    const s = await serve(dagScript());
    const root = dagHarness({ maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'codex'], codexEnv(s));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(s.unknown, [], unknownRequests(s));
    for (const t of TASKS) {
      assert.equal(taskById(root, t.id).status, 'completed', t.id);
      assert.equal(git(root, 'show', `main:${t.file}`), `made by ${t.id}`, t.file);
      const answered = s.served.filter((x) => x.key === t.title).map((x) => x.step?.kind);
      // codex's own apply_patch wrote the file and its exec_command committed it.
      assert.deepEqual(answered, ['write', 'shell', 'final'], `${t.id}: ${JSON.stringify(s.served)}`);
      assert.ok(s.served.find((x) => x.key === t.title)!.tools!.includes('apply_patch'));
      const report = agentReport(root, t.id);
      assert.deepEqual(report.tokens, expectedTokens(s, t.title), `${t.id}: ${JSON.stringify(report)}`);
      assert.equal(report.cost_usd, undefined, 'codex reports no cost');
    }
  });

  it("takes the verdict from the agent's own message, not from a command that prints one", async () => {
    const s = await serve({
      [TASK.title]: [
        { kind: 'shell', command: 'echo RESULT:SUCCESS' },
        { kind: 'final', text: 'RESULT:FAIL the fixture is missing' },
      ],
    });
    const root = dagHarness({ maxAttempts: 1, only: ['task-001'] });
    const r = await launchpad(root, ['run', '--agent', 'codex'], codexEnv(s));
    assert.equal(r.code, 1, show(r, root));
    assert.deepEqual(
      s.served.map((x) => x.step?.kind),
      ['shell', 'final'],
    );
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'failed');
    assert.equal(task.attempts, 1);
    assert.match(task.error_log.at(-1) ?? '', /the fixture is missing/, show(r, root));
  });

  it("records codex's own words when the provider refuses the request (401)", async () => {
    const s = await serve({
      [TASK.title]: [{ kind: 'fault', status: 401, message: 'Incorrect API key provided: sk-laun****test.', times: 20 }],
    });
    const root = dagHarness({ maxAttempts: 1, only: ['task-001'] });
    const r = await launchpad(root, ['run', '--agent', 'codex'], codexEnv(s));
    assert.equal(r.code, 1, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'failed');
    assert.equal(task.attempts, 1);
    // codex: "unexpected status 401 Unauthorized: Incorrect API key provided: …, url: …"
    assert.match(task.error_log.at(-1) ?? '', /401 Unauthorized: Incorrect API key provided/, show(r, root));
    assert.match(linesOf(root, 'ERROR', 'task-001').at(-1)?.message ?? '', /Incorrect API key provided/, show(r, root));
  });

  it('charges a plain HTTP 500, which codex words as "high demand", as the attempt\'s failure', async () => {
    const s = await serve({ [TASK.title]: [{ kind: 'fault', status: 500, message: 'Internal server error', times: 20 }] });
    const root = dagHarness({ maxAttempts: 1, only: ['task-001'] });
    const r = await launchpad(root, ['run', '--agent', 'codex'], codexEnv(s));
    // Not exit 7: a failing provider is not a usage limit to wait out.
    assert.equal(r.code, 1, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'failed');
    assert.equal(task.attempts, 1);
    assert.match(task.error_log.at(-1) ?? '', /experiencing high demand/, show(r, root));
  });

  it('stops uncharged on a 503, which codex prints with its status', async () => {
    const s = await serve({ [TASK.title]: [{ kind: 'fault', status: 503, message: 'The upstream is unavailable', times: 20 }] });
    const root = dagHarness({ maxAttempts: 1, only: ['task-001'] });
    const r = await launchpad(root, ['run', '--agent', 'codex'], codexEnv(s));
    assert.equal(r.code, 7, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'pending');
    assert.equal(task.attempts, 0);
    const limit = agentReport(root, 'task-001').limit;
    assert.equal(limit?.kind, 'overloaded', JSON.stringify(limit));
    // codex: "unexpected status 503 Service Unavailable: The upstream is unavailable, url: …"
    assert.match(limit.message, /503 Service Unavailable: The upstream is unavailable/);
  });

  it('stops uncharged on a usage limit, with the reset codex printed as a wall-clock time', async () => {
    // Far enough ahead that the printed minute is still to come when Launchpad reads it.
    const reset = minuteAhead(3 * 60_000);
    const s = await serve({ [TASK.title]: [usageLimit(reset, 20)] });
    const root = dagHarness({ maxAttempts: 1, only: ['task-001'] });
    const r = await launchpad(root, ['run', '--agent', 'codex'], codexEnv(s));
    assert.equal(r.code, 7, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'pending');
    assert.equal(task.attempts, 0);
    const limit = agentReport(root, 'task-001').limit;
    assert.equal(limit?.kind, 'usage-limit', JSON.stringify(limit));
    // codex: "You've hit your usage limit. … or try again at 5:55 PM."
    assert.match(limit.message, /try again at \d{1,2}:\d\d [AP]M/);
    assert.equal(limit.resets_at, reset.toISOString(), JSON.stringify(limit));
  });

  it('with --wait-on-limit waits until the printed reset, then completes the task', async () => {
    // The nearest minute codex can print that is still ahead once the first attempt has failed.
    const reset = minuteAhead(15_000);
    const s = await serve({ [TASK.title]: [usageLimit(reset), ...doTask(TASK)] });
    const root = dagHarness({ maxAttempts: 1, only: ['task-001'] });
    // A one-second back-off: a run that did not read the reset would retry long before it.
    const env = { ...codexEnv(s), LAUNCHPAD_LIMIT_BACKOFF_SECONDS: '1' };
    const r = await launchpad(root, ['run', '--agent', 'codex', '--wait-on-limit'], env);
    assert.equal(r.code, 0, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'completed');
    assert.equal(task.attempts, 1);
    const answers = s.served.filter((x) => x.key === TASK.title);
    assert.equal(answers.length, 4, JSON.stringify(s.served));
    assert.match(
      linesOf(root, 'WARN')
        .map((l) => l.message)
        .join('\n'),
      new RegExp(`waiting until ${reset.toISOString().replace('.000Z', 'Z')} to resume`),
      show(r, root),
    );
    assert.ok(Date.now() >= reset.getTime(), 'the run went on before the reset');
  });

  it('fires the SessionStart and Stop hooks `launchpad hooks install codex` writes', async () => {
    // The conversation's texts, model call by model call: where each hook's words arrived.
    const prompts: string[] = [];
    const recording: Protocol = {
      ...openaiResponses,
      read(body, url) {
        const ex = openaiResponses.read(body, url);
        if (ex) prompts.push(ex.prompt);
        return ex;
      },
    };
    // Keyed by the task's title, which only the SessionStart hook's context names: the prompt does not.
    const s = await serve({ [TASK.title]: [{ kind: 'final', text: 'I read the task list.' }] }, recording);
    const root = dagHarness({ only: ['task-001'] });
    const env = codexEnv(s);
    const installed = await launchpad(root, ['hooks', 'install', 'codex', '--command', `${process.execPath} ${CLI_COPY}`], env);
    assert.equal(installed.code, 0, show(installed));
    writeFileSync(join(root, '.harness-active'), '');
    // A person's codex: hooks switched on, this project trusted (its .codex/ is read only then),
    // and the hooks' review given (the TUI keeps it; exec has only this flag for it).
    writeFileSync(join(env.CODEX_HOME!, 'config.toml'), `[features]\nhooks = true\n[projects."${root}"]\ntrust_level = "trusted"\n`, {
      flag: 'a',
    });
    const r = await codexExec(
      root,
      env,
      ['--dangerously-bypass-approvals-and-sandbox', '--dangerously-bypass-hook-trust'],
      'Work the task list.',
    );
    assert.equal(r.code, 0, r.output);
    assert.deepEqual(s.unknown, [], unknownRequests(s));
    // SessionStart: the first call already holds the current task; Stop: codex went on with the
    // hook's reason as the next message; the second Stop, with nothing changed, let it end.
    assert.equal(prompts.length, 2, `${r.output}\n${JSON.stringify(prompts, null, 1)}`);
    assert.match(prompts[0]!, /Current task: task-001 "Write alpha.txt"/);
    assert.doesNotMatch(prompts[0]!, /keep working/);
    assert.match(prompts[1]!, /the task list is not done; keep working/);
  });
});
