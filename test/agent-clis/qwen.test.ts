// Qwen Code (@qwen-code/qwen-code, the version in its preset's `proven`), the real CLI, against
// the scripted model server speaking OpenAI's Chat Completions: OPENAI_BASE_URL points it there,
// and ~/.qwen/settings.json in the test's own HOME keeps it off the network.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { launchpad, show, taskById } from '../unit/controller/support';
import { type ModelServer, type Script, startModelServer } from './modelServer';
import { openAiFaultScenarios } from './openAiFaults';
import { chatCompletions } from './protocols/chatCompletions';
import { agentReport, dagHarness, dagScript, TASKS, toolEnv, transcript } from './rig';

/** The environment of a run: the OpenAI-compatible endpoint is `server`; no telemetry, no updates. */
function qwenEnv(server: ModelServer): NodeJS.ProcessEnv {
  const env = toolEnv('qwen', { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-test', OPENAI_MODEL: 'scripted-1' });
  const dir = join(env.HOME!, '.qwen');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'settings.json'),
    JSON.stringify({
      general: { enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: 'openai' } },
      // Its OpenAI client and its stream both retry a 429 on their own (the stream ten times,
      // a minute apart); with none, only its general retry remains: seven requests in all, each
      // after the response's retry-after.
      model: { generationConfig: { maxRetries: 0 } },
    }),
  );
  return env;
}

describe('qwen, the real CLI against the scripted model server', function () {
  this.timeout(240_000);
  let server: ModelServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(script: Script): Promise<{ env: NodeJS.ProcessEnv; server: ModelServer }> {
    server = await startModelServer([chatCompletions], script);
    return { env: qwenEnv(server), server };
  }

  it('runs the DAG with its own write_file and run_shell_command tools; tokens are what the server reported, no cost', async () => {
    const { env, server } = await start(dagScript());
    const root = dagHarness();
    const r = await launchpad(root, ['run', '--agent', 'qwen'], env);
    assert.equal(r.code, 0, show(r, root) + `\nunknown: ${JSON.stringify(server.unknown)}`);
    assert.deepEqual(server.unknown, []);
    for (const t of TASKS) {
      assert.equal(taskById(root, t.id).status, 'completed', show(r, root));
      assert.equal(readFileSync(join(root, t.file), 'utf8'), `made by ${t.id}\n`);
      const kinds = server.served.filter((s) => s.key === t.title).map((s) => s.step!.kind);
      assert.deepEqual(kinds, ['write', 'shell', 'final'], t.id);
      assert.ok(server.served.find((s) => s.key === t.title)!.tools!.includes('write_file'));

      const u = server.usageOf(t.title);
      const report = agentReport(root, t.id);
      assert.deepEqual(report.tokens, { input: u.input + u.cacheRead, output: u.output, cache_read: u.cacheRead }, t.id);
      // Qwen Code prints no dollar figure: none is recorded.
      assert.equal(report.cost_usd, undefined);
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
    const r = await launchpad(root, ['run', '--agent', 'qwen'], env);
    assert.notEqual(r.code, 0, show(r, root));
    assert.ok(
      server.served.some((s) => s.step?.kind === 'shell'),
      'the bash tool ran the command',
    );
    assert.match(transcript(root, t.id), /"tool_result","tool_use_id":"[^"]+","is_error":false,"content":"RESULT:SUCCESS/);
    const task = taskById(root, t.id);
    assert.equal(task.status, 'failed', show(r, root));
    assert.match(task.error_log.at(-1) ?? '', /disk is read-only/);
  });

  // With its client's retries off (qwenEnv), Qwen Code still sends a 429'd request seven times
  // in all, each after the response's retry-after (one second here).
  openAiFaultScenarios({ preset: 'qwen', start, retries: { times: 7, headers: { 'retry-after': '1' } } });
});
