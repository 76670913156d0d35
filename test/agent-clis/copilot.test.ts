// GitHub Copilot CLI (the real `copilot` at the preset's proven version) run by `launchpad run
// --agent copilot` with a provider of its own (BYOK) of Anthropic type: the scripted Messages
// server. No GitHub login is needed and offline mode keeps it off every other network.
import assert from 'node:assert/strict';

import { git, launchpad, readLog, show, taskById } from '../unit/controller/support';
import { type ModelServer, type Script, startModelServer } from './modelServer';
import { anthropicProtocol } from './protocols/anthropic';
import { agentReport, dagHarness, dagScript, doTask, TASKS, toolEnv } from './rig';

function copilotEnv(server: ModelServer, vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  return toolEnv('copilot', {
    COPILOT_PROVIDER_BASE_URL: server.url,
    COPILOT_PROVIDER_TYPE: 'anthropic',
    COPILOT_PROVIDER_API_KEY: 'sk-ant-scripted',
    COPILOT_MODEL: 'claude-sonnet-4.5',
    // No GitHub authentication, telemetry, web tools or update checks.
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    ...vars,
  });
}

describe('agent CLI: copilot (GitHub Copilot CLI, BYOK)', function () {
  this.timeout(240_000);
  let server: ModelServer | undefined;

  async function serve(script: Script): Promise<ModelServer> {
    server = await startModelServer([anthropicProtocol()], script);
    return server;
  }

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('runs the DAG with its own create and bash tools; tokens are what the server reported', async () => {
    const s = await serve(dagScript());
    const root = dagHarness();
    const r = await launchpad(root, ['run', '--agent', 'copilot'], copilotEnv(s));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(s.unknown, []);
    for (const t of TASKS) {
      assert.equal(taskById(root, t.id).status, 'completed', show(r, root));
      assert.equal(git(root, 'show', `HEAD:${t.file}`), `made by ${t.id}`);
      const served = s.served.filter((x) => x.key === t.title);
      assert.deepEqual(
        served.map((x) => x.step!.kind),
        ['write', 'shell', 'final'],
      );
      assert.ok(served[0]!.tools!.includes('create') && served[0]!.tools!.includes('bash'), served[0]!.tools!.join(' '));
      const usage = s.usageOf(t.title);
      const report = agentReport(root, t.id);
      // Copilot bills premium requests, none with a provider of one's own; no dollar cost.
      assert.equal(report.cost_usd, undefined);
      assert.deepEqual(report.tokens, {
        input: usage.input + usage.cacheRead,
        output: usage.output,
        cache_read: usage.cacheRead,
        cache_write: 0,
      });
    }
  });

  it('a verdict printed by a command is not the verdict: the last message says RESULT:FAIL', async () => {
    const s = await serve({
      [TASKS[0]!.title]: [
        { kind: 'shell', command: 'echo RESULT:SUCCESS' },
        { kind: 'final', text: 'RESULT:FAIL the disk holds no alpha' },
      ],
    });
    const root = dagHarness({ only: ['task-001'], maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'copilot'], copilotEnv(s));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed', show(r, root));
    assert.match(JSON.stringify(t.error_log), /the disk holds no alpha/, show(r, root));
    assert.deepEqual(
      s.served.map((x) => x.step?.kind),
      ['shell', 'final'],
    );
  });

  it("a fault it gives up on fails the attempt with the tool's own words", async () => {
    const s = await serve({
      [TASKS[0]!.title]: [
        { kind: 'fault', status: 400, message: 'messages.3: text content blocks must contain non-whitespace text', times: 20 },
      ],
    });
    const root = dagHarness({ only: ['task-001'], maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'copilot'], copilotEnv(s));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'failed', show(r, root));
    const words = /text content blocks must contain non-whitespace text/;
    assert.match(JSON.stringify(t.error_log), words, show(r, root));
    assert.match(agentReport(root, 'task-001').error, words);
  });

  describe("a rate limit (429 with the API's reset headers, which Copilot does not print)", () => {
    // Copilot retries a 429 five times by itself (about 2 s apart), then gives up naming the
    // last error: six faults make it give up.
    const limited = () => ({
      kind: 'fault' as const,
      status: 429,
      message: 'This request would exceed the rate limit for your organization of 50 requests per minute. Please try again later.',
      headers: {
        'retry-after': '1',
        'anthropic-ratelimit-requests-limit': '50',
        'anthropic-ratelimit-requests-remaining': '0',
        'anthropic-ratelimit-requests-reset': new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z'),
      },
      times: 6,
    });

    it('stops the run uncharged (exit 7); no reset time is known', async () => {
      const s = await serve({ [TASKS[0]!.title]: [limited(), ...doTask(TASKS[0]!)] });
      const root = dagHarness({ only: ['task-001'] });
      const r = await launchpad(root, ['run', '--agent', 'copilot'], copilotEnv(s));
      assert.equal(r.code, 7, show(r, root));
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'pending', show(r, root));
      assert.equal(t.attempts, 0);
      assert.deepEqual(t.error_log, []);
      const limit = agentReport(root, 'task-001').limit;
      assert.equal(limit.kind, 'rate-limit');
      assert.match(limit.message, /retried 5 times .*429 This request would exceed the rate limit/);
      assert.equal(limit.resets_at, undefined);
    });

    it('with --wait-on-limit backs off and completes the task', async () => {
      const s = await serve({ [TASKS[0]!.title]: [limited(), ...doTask(TASKS[0]!)] });
      const root = dagHarness({ only: ['task-001'] });
      const env = copilotEnv(s, { LAUNCHPAD_LIMIT_BACKOFF_SECONDS: '0.5' });
      const r = await launchpad(root, ['run', '--agent', 'copilot', '--wait-on-limit'], env);
      assert.equal(r.code, 0, show(r, root));
      const t = taskById(root, 'task-001');
      assert.equal(t.status, 'completed', show(r, root));
      assert.equal(t.attempts, 1);
      assert.ok(
        readLog(root).some((l) => /rate limit of copilot: paused until \S+Z \(back-off\)/.test(l)),
        show(r, root),
      );
    });
  });
});
