// Claude Code (the real `claude` at the preset's proven version) run by `launchpad run --agent
// claude` against the scripted Anthropic Messages server.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { git, launchpad, readLog, show, taskById } from '../unit/controller/support';
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
      assert.ok(Math.abs(report.cost_usd - cost) < 1e-9, `cost ${report.cost_usd} != ${cost}`);
    }
  });
});
