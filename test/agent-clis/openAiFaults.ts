// What every tool on OpenAI's Chat Completions is asked alike: an error it gives up on, a rate
// limit in OpenAI's words, and a wait for that limit's reset. Called inside a tool's describe.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { launchpad, show, taskById } from '../unit/controller/support';
import type { ModelServer, Script } from './modelServer';
import { agentReport, dagHarness, doTask, TASKS } from './rig';

export interface OpenAiFaultOptions {
  preset: string;
  /** The tool's environment pointed at a new scripted server. */
  start(script: Script): Promise<{ env: NodeJS.ProcessEnv; server: ModelServer }>;
  /** How the tool retries a 429 on its own: the requests it sends in all, and the headers that keep them quick. */
  retries: { times: number; headers: Record<string, string> };
}

export function openAiFaultScenarios(opts: OpenAiFaultOptions): void {
  const start = opts.start;
  it('an error it gives up on fails the attempt with its own words', async () => {
    const t = TASKS[0]!;
    const message = 'Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.';
    const { env } = await start({ [t.title]: [{ kind: 'fault', status: 401, message, times: 100 }] });
    const root = dagHarness({ only: [t.id], maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', opts.preset], env);
    assert.notEqual(r.code, 0, show(r, root));
    const task = taskById(root, t.id);
    assert.equal(task.status, 'failed', show(r, root));
    assert.match(task.error_log.at(-1) ?? '', /Incorrect API key provided: sk-test/);
    assert.match(task.error_log.at(-1) ?? '', /HTTP 401/);
  });

  const RATE_LIMITED = opts.retries.times;
  const rateLimit = (seconds: number) => ({
    kind: 'fault' as const,
    status: 429,
    message: `Rate limit reached for scripted-1 on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in ${seconds}s.`,
    headers: { ...opts.retries.headers, 'x-ratelimit-reset-requests': `${seconds}s` },
    times: RATE_LIMITED,
  });

  it('a rate limit stops the run uncharged (exit 7) with the reset it printed', async () => {
    const t = TASKS[0]!;
    const { env } = await start({ [t.title]: [{ ...rateLimit(600), times: 100 }] });
    const root = dagHarness({ only: [t.id] });
    const started = Date.now();
    const r = await launchpad(root, ['run', '--agent', opts.preset], env);
    assert.equal(r.code, 7, show(r, root));
    const task = taskById(root, t.id);
    assert.equal(task.status, 'pending', show(r, root));
    assert.equal(task.attempts, 0);
    const limit = agentReport(root, t.id).limit;
    assert.equal(limit.kind, 'rate-limit');
    assert.match(limit.message, /Please try again in 600s/);
    const resets = Date.parse(limit.resets_at);
    assert.ok(resets >= started + 600_000 && resets <= Date.now() + 600_000, limit.resets_at);
  });

  it('--wait-on-limit waits for that reset, then completes the task', async () => {
    const t = TASKS[0]!;
    const { env, server } = await start({ [t.title]: [rateLimit(5), ...doTask(t)] });
    const root = dagHarness({ only: [t.id] });
    const started = Date.now();
    const r = await launchpad(root, ['run', '--agent', opts.preset, '--wait-on-limit'], env);
    assert.equal(r.code, 0, show(r, root));
    assert.ok(Date.now() - started >= 5000, 'the run waited for the reset');
    const task = taskById(root, t.id);
    assert.equal(task.status, 'completed', show(r, root));
    assert.equal(readFileSync(join(root, t.file), 'utf8'), `made by ${t.id}\n`);
    assert.equal(server.served.filter((s) => s.step?.kind === 'fault').length, RATE_LIMITED);
  });
}
