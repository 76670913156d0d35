// Claude Code (the real `claude` at the preset's proven version) run by `launchpad run --agent
// claude` against the scripted Anthropic Messages server.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { CLI_COPY, git, launchpad, readLog, show, taskById } from '../unit/controller/support';
import { type ModelServer, type Script, startModelServer } from './modelServer';
import { type AnthropicProtocol, anthropicProtocol } from './protocols/anthropic';
import { agentReport, dagHarness, dagScript, doTask, TASKS, toolEnv } from './rig';

/** Claude Code's price of the model it names by default (claude-opus-4-8), dollars per token. */
const PRICE = { input: 5e-6, cacheRead: 0.5e-6, output: 25e-6 };

function claudeEnv(server: ModelServer, vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  return toolEnv('claude', {
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: 'sk-ant-scripted',
    // It refuses --dangerously-skip-permissions as root outside a sandbox; tests run as root.
    IS_SANDBOX: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // Its own API retries back off for minutes; a fault here must end the attempt at once.
    CLAUDE_CODE_MAX_RETRIES: '0',
    ...vars,
  });
}

describe('agent CLI: claude (Claude Code)', function () {
  this.timeout(240_000);
  let server: ModelServer | undefined;
  let api: AnthropicProtocol;

  async function serve(script: Script): Promise<ModelServer> {
    api = anthropicProtocol();
    server = await startModelServer([api], script);
    return server;
  }

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('runs the DAG with its own Write and Bash tools; tokens and cost are what the server reported', async () => {
    const s = await serve(dagScript());
    const root = dagHarness();
    const r = await launchpad(root, ['run', '--agent', 'claude'], claudeEnv(s));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(s.unknown, []);
    for (const t of TASKS) {
      assert.equal(taskById(root, t.id).status, 'completed', show(r, root));
      assert.equal(git(root, 'show', `HEAD:${t.file}`), `made by ${t.id}`);
      const steps = s.served.filter((x) => x.key === t.title).map((x) => x.step!.kind);
      assert.deepEqual(steps, ['write', 'shell', 'final']);
      const usage = s.usageOf(t.title);
      const report = agentReport(root, t.id);
      assert.deepEqual(report.tokens, {
        input: usage.input + usage.cacheRead,
        output: usage.output,
        cache_read: usage.cacheRead,
        cache_write: 0,
      });
      const cost = usage.input * PRICE.input + usage.cacheRead * PRICE.cacheRead + usage.output * PRICE.output;
      // agent.json holds money to 6 decimal places.
      assert.equal(report.cost_usd, Math.round(cost * 1e6) / 1e6, `cost ${report.cost_usd} != ${cost}`);
    }
  });

  it('a verdict printed by a command is not the verdict: the last message says RESULT:FAIL', async () => {
    const [alpha] = TASKS;
    const s = await serve({
      [alpha!.title]: [
        { kind: 'shell', command: 'echo RESULT:SUCCESS' },
        { kind: 'final', text: 'RESULT:FAIL the disk holds no alpha' },
      ],
    });
    const root = dagHarness({ only: ['task-001'], maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'claude'], claudeEnv(s));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed', show(r, root));
    assert.match(JSON.stringify(t.error_log), /the disk holds no alpha/, show(r, root));
    assert.deepEqual(
      s.served.map((x) => x.step?.kind),
      ['shell', 'final'],
    );
  });

  it("a fault it gives up on fails the attempt with the tool's own words", async () => {
    const [alpha] = TASKS;
    const s = await serve({
      [alpha!.title]: [
        { kind: 'fault', status: 400, message: 'messages.3: text content blocks must contain non-whitespace text', times: 20 },
      ],
    });
    const root = dagHarness({ only: ['task-001'], maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'claude'], claudeEnv(s));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed', show(r, root));
    const words = /text content blocks must contain non-whitespace text/;
    assert.match(JSON.stringify(t.error_log), words, show(r, root));
    assert.match(agentReport(root, 'task-001').error, words);
  });

  describe("a 429 with the API's limit headers", () => {
    /** A 429 in the API's shape, with the unified limit headers Claude Code reads for a subscriber. */
    function limitFault(resetEpoch: number) {
      return {
        kind: 'fault' as const,
        status: 429,
        message: "This request would exceed your account's rate limit. Please try again later.",
        headers: {
          'retry-after': String(Math.max(1, resetEpoch - Math.floor(Date.now() / 1000))),
          'anthropic-ratelimit-unified-status': 'rejected',
          'anthropic-ratelimit-unified-reset': String(resetEpoch),
          'anthropic-ratelimit-unified-representative-claim': 'five_hour',
          'anthropic-ratelimit-unified-5h-status': 'rejected',
          'anthropic-ratelimit-unified-5h-reset': String(resetEpoch),
        },
      };
    }
    // Claude Code reads the limit headers (and prints rate_limit_event) only for a claude.ai
    // login; an OAuth token in the environment is one, with the base URL still ours.
    const subscriber = (s: ModelServer) => {
      const env = claudeEnv(s, { CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-scripted' });
      delete env.ANTHROPIC_API_KEY;
      return env;
    };

    it('with a claude.ai login (rate_limit_event): stops the run uncharged (exit 7) with the reset it printed', async () => {
      const reset = Math.floor(Date.now() / 1000) + 3600;
      const [alpha] = TASKS;
      const s = await serve({ [alpha!.title]: [{ ...limitFault(reset), times: 5 }, ...doTask(alpha!)] });
      const root = dagHarness({ only: ['task-001'] });
      const r = await launchpad(root, ['run', '--agent', 'claude'], subscriber(s));
      assert.equal(r.code, 7, show(r, root));
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'pending', show(r, root));
      assert.equal(t.attempts, 0);
      assert.deepEqual(t.error_log, []);
      const limit = agentReport(root, 'task-001').limit;
      assert.equal(limit.kind, 'usage-limit');
      assert.equal(limit.resets_at, new Date(reset * 1000).toISOString());
      assert.deepEqual(s.unknown, []);
    });

    it('with an API key it prints no reset time: a rate limit, still uncharged (exit 7)', async () => {
      const [alpha] = TASKS;
      const s = await serve({ [alpha!.title]: [{ ...limitFault(Math.floor(Date.now() / 1000) + 3600), times: 5 }] });
      const root = dagHarness({ only: ['task-001'] });
      const r = await launchpad(root, ['run', '--agent', 'claude'], claudeEnv(s));
      assert.equal(r.code, 7, show(r, root));
      const t = taskById(root, 'task-001');
      assert.equal(t.attempts, 0, show(r, root));
      assert.deepEqual(t.error_log, []);
      const limit = agentReport(root, 'task-001').limit;
      assert.equal(limit.kind, 'rate-limit');
      assert.match(limit.message, /API Error: Request rejected \(429\) · This request would exceed your account's rate limit/);
      assert.equal(limit.resets_at, undefined);
    });

    it('with a claude.ai login and --wait-on-limit: waits until that reset and completes the task', async () => {
      const reset = Math.floor(Date.now() / 1000) + 4;
      const [alpha] = TASKS;
      const s = await serve({ [alpha!.title]: [limitFault(reset), ...doTask(alpha!)] });
      const root = dagHarness({ only: ['task-001'] });
      const r = await launchpad(root, ['run', '--agent', 'claude', '--wait-on-limit'], subscriber(s));
      assert.equal(r.code, 0, show(r, root));
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'completed', show(r, root));
      assert.equal(t.attempts, 1);
      assert.ok(Date.now() >= reset * 1000, 'the run ended before the reset');
      const retried = s.served.filter((x) => x.key === alpha!.title && x.step?.kind === 'write');
      assert.equal(retried.length, 1);
      assert.ok(
        readLog(root).some((l) => l.includes('resumed after usage limit of claude')),
        show(r, root),
      );
    });
  });

  describe('hooks (launchpad hooks install claude), with claude run by a person', () => {
    /** `claude -p` in `root` as a person runs it (not under launchpad run); its stream-json output. */
    async function personRuns(root: string, s: ModelServer): Promise<{ code: number | null; stdout: string }> {
      const child = spawn('claude', ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'], {
        cwd: root,
        env: claudeEnv(s),
        stdio: ['pipe', 'pipe', 'inherit'],
        timeout: 120_000,
      });
      child.stdin.end('Work on the task list: Write alpha.txt.');
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      return { code, stdout };
    }

    /** A harness with the hooks installed, running the launchpad under test. */
    async function hooked(): Promise<string> {
      const root = dagHarness({ only: ['task-001'] });
      const r = await launchpad(root, ['hooks', 'install', 'claude', '--command', `${process.execPath} ${CLI_COPY}`]);
      assert.equal(r.code, 0, show(r));
      return root;
    }

    const script = (): Script => ({ [TASKS[0]!.title]: [{ kind: 'final', text: 'Nothing done yet.' }] });

    it('with .harness-active: SessionStart gives the task list, Stop sends it back to work once', async () => {
      const root = await hooked();
      writeFileSync(join(root, '.harness-active'), '');
      const s = await serve(script());
      const r = await personRuns(root, s);
      assert.equal(r.code, 0, r.stdout);
      const calls = api.requests.filter((q) => (q.body.tools ?? []).length);
      assert.equal(calls.length, 2, `one answer, one more turn asked by the Stop hook:\n${r.stdout}`);
      assert.match(JSON.stringify(calls[0]!.body.messages), /Launchpad harness in .*\.harness-active is present/);
      const last = calls[1]!.body.messages.at(-1);
      assert.match(JSON.stringify(last), /task-001/, "the Stop hook's reason is the next turn's prompt");
    });

    it('without .harness-active both hooks do nothing', async () => {
      const root = await hooked();
      const s = await serve(script());
      const r = await personRuns(root, s);
      assert.equal(r.code, 0, r.stdout);
      const calls = api.requests.filter((q) => (q.body.tools ?? []).length);
      assert.equal(calls.length, 1, r.stdout);
      assert.doesNotMatch(JSON.stringify(calls[0]!.body), /Launchpad harness in/);
    });
  });
});
