// OpenCode (opencode-ai, the version in its preset's `proven`), the real CLI, against the scripted
// model server speaking OpenAI's Chat Completions: a provider of its OpenAI-compatible SDK
// whose baseURL is the server, defined in opencode.json in the test's own config folder.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { launchpad, show, taskById } from '../unit/controller/support';
import { type ModelServer, type Script, startModelServer } from './modelServer';
import { openAiFaultScenarios } from './openAiFaults';
import { chatCompletions } from './protocols/chatCompletions';
import { agentReport, dagHarness, dagScript, TASKS, toolEnv, transcript } from './rig';

/** Dollars per million tokens the model's config names, so opencode reports a cost. */
const PRICE = { input: 3, output: 15, cache_read: 0.3 };

/** The environment of a run: opencode's config points at `server` and keeps it off the network. */
function opencodeEnv(server: ModelServer): NodeJS.ProcessEnv {
  const env = toolEnv('opencode', {
    // No models.dev catalogue, no self-update, no sharing, no plugins or LSP servers from npm,
    // no Claude Code files from the test's HOME.
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
  });
  // It still installs @opencode-ai/plugin from npm into this folder, in the background (a
  // failure is only logged); the OpenAI-compatible provider is built in.
  const dir = join(env.XDG_CONFIG_HOME!, 'opencode');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'opencode.json'),
    JSON.stringify({
      provider: {
        scripted: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Scripted',
          options: { baseURL: `${server.url}/v1`, apiKey: 'sk-test' },
          models: { 'scripted-1': { name: 'Scripted 1', cost: PRICE } },
        },
      },
      model: 'scripted/scripted-1',
      small_model: 'scripted/scripted-1',
      autoupdate: false,
      share: 'disabled',
    }),
  );
  return env;
}

describe('opencode, the real CLI against the scripted model server', function () {
  this.timeout(240_000);
  let server: ModelServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(script: Script): Promise<{ env: NodeJS.ProcessEnv; server: ModelServer }> {
    server = await startModelServer([chatCompletions], script);
    return { env: opencodeEnv(server), server };
  }

  it('runs the DAG with its own write and bash tools; tokens and cost are what the server reported', async () => {
    const { env, server } = await start(dagScript());
    const root = dagHarness();
    const r = await launchpad(root, ['run', '--agent', 'opencode'], env);
    assert.equal(r.code, 0, show(r, root) + `\nunknown: ${JSON.stringify(server.unknown)}`);
    assert.deepEqual(server.unknown, []);
    for (const t of TASKS) {
      assert.equal(taskById(root, t.id).status, 'completed', show(r, root));
      assert.equal(readFileSync(join(root, t.file), 'utf8'), `made by ${t.id}\n`);
      const kinds = server.served.filter((s) => s.key === t.title).map((s) => s.step!.kind);
      assert.deepEqual(kinds, ['write', 'shell', 'final'], t.id);
      assert.ok(server.served.find((s) => s.key === t.title)!.tools!.includes('write'));

      const u = server.usageOf(t.title);
      const report = agentReport(root, t.id);
      assert.deepEqual(
        report.tokens,
        { input: u.input + u.cacheRead, output: u.output, reasoning: 0, cache_read: u.cacheRead, cache_write: 0 },
        t.id,
      );
      const cost = (u.input * PRICE.input + u.output * PRICE.output + u.cacheRead * PRICE.cache_read) / 1e6;
      // agent.json holds money to 6 decimal places.
      assert.equal(report.cost_usd, Math.round(cost * 1e6) / 1e6, `${t.id}: cost ${report.cost_usd} != ${cost}`);
    }
  });

  it('a command printing RESULT:SUCCESS is not the verdict: its own last message fails the attempt', async () => {
    const t = TASKS[0]!;
    const { env, server } = await start({
      [t.title]: [
        { kind: 'shell', command: 'echo RESULT:SUCCESS' },
        { kind: 'final', text: 'The file could not be written.\nRESULT:FAIL disk is read-only' },
      ],
    });
    const root = dagHarness({ only: [t.id], maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'opencode'], env);
    assert.notEqual(r.code, 0, show(r, root));
    assert.ok(
      server.served.some((s) => s.step?.kind === 'shell'),
      'the bash tool ran the command',
    );
    assert.match(transcript(root, t.id), /"output":"RESULT:SUCCESS\\n"/);
    const task = taskById(root, t.id);
    assert.equal(task.status, 'failed', show(r, root));
    assert.match(task.error_log.at(-1) ?? '', /disk is read-only/);
  });

  // opencode retries a 429 itself, five times, each after the response's retry-after-ms (or
  // retry-after); a short retry-after-ms keeps those retries quick.
  openAiFaultScenarios({ preset: 'opencode', start, retries: { times: 6, headers: { 'retry-after-ms': '100' } } });
});
