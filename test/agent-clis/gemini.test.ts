// The gemini preset with the real Gemini CLI (the version in its `proven` field) against the
// scripted Gemini API on 127.0.0.1: the DAG merges with the tool's own write_file and
// run_shell_command, the verdict is the agent's own words, a failure shows the tool's reason, a
// quota error stops the run uncharged (and --wait-on-limit waits it out), and the hooks fire.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { findPreset, presetCommand } from '../../src/core/agents/presets';
import { CLI_COPY, git, harness, launchpad, linesOf, readLog, type Result, show, taskById, tempDir } from '../unit/controller/support';
import { type ModelServer, startModelServer } from './modelServer';
import type { Protocol } from './protocol';
import { gemini } from './protocols/gemini';
import { agentReport, dagHarness, dagScript, doTask, TASKS, toolEnv, transcript } from './rig';

const [ALPHA, BETA, GAMMA] = TASKS as [(typeof TASKS)[number], (typeof TASKS)[number], (typeof TASKS)[number]];

/**
 * Settings in the tool's own home: no usage statistics, telemetry, update checks or IDE link
 * (nothing leaves the machine), the API key as the way in, and (`maxAttempts`) how often it
 * tries a model call before giving up: 1 where a test's fault must reach Launchpad at once,
 * since a quota error with a short retry delay is otherwise retried by the tool itself.
 */
function settings(maxAttempts?: number): Record<string, unknown> {
  return {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, ...(maxAttempts ? { maxAttempts } : {}) },
    security: { auth: { selectedType: 'gemini-api-key' } },
    ide: { enabled: false },
  };
}

function geminiEnv(server: ModelServer, maxAttempts?: number): NodeJS.ProcessEnv {
  const env = toolEnv('gemini', {
    GEMINI_API_KEY: 'test-key',
    GOOGLE_GEMINI_BASE_URL: server.url,
    // Its error reports (gemini-client-error-*.json) go to the temp folder: the test's own.
    TMPDIR: tempDir('launchpad-gemini-tmp-'),
  });
  mkdirSync(join(env.HOME!, '.gemini'), { recursive: true });
  writeFileSync(join(env.HOME!, '.gemini', 'settings.json'), JSON.stringify(settings(maxAttempts), null, 2));
  return env;
}

/** agent.json's tokens for what the server reported to a task's conversation. */
function expectedTokens(server: ModelServer, title: string): Record<string, number> {
  const u = server.usageOf(title);
  return { input: u.input + u.cacheRead, output: u.output, cache_read: u.cacheRead };
}

function errorLog(root: string, id: string): string {
  const t = taskById(root, id) as { error_log?: unknown[] };
  return JSON.stringify(t.error_log ?? []);
}

describe('gemini: the real Gemini CLI against the scripted Gemini API', function () {
  this.timeout(240_000);
  let server: ModelServer | undefined;

  afterEach(async () => {
    if (server && this.ctx.currentTest?.state === 'failed') {
      console.log('served:', JSON.stringify(server.served.map((s) => [s.url, s.key, s.step?.kind])));
      console.log('unknown:', JSON.stringify(server.unknown).slice(0, 2000));
    }
    await server?.close();
    server = undefined;
  });

  it('runs the DAG with its own tools and merges it; agent.json holds the tokens the server reported', async () => {
    const root = dagHarness();
    server = await startModelServer([gemini], dagScript());
    const r = await launchpad(root, ['run', '--agent', 'gemini'], geminiEnv(server));
    assert.equal(r.code, 0, show(r, root));
    assert.deepEqual(server.unknown, []);
    for (const t of TASKS) {
      assert.equal(taskById(root, t.id).status, 'completed', show(r, root));
      assert.equal(git(root, 'show', `main:${t.file}`), `made by ${t.id}`);
      const steps: Array<string | undefined> = server.served.filter((s) => s.key === t.title).map((s) => s.step?.kind);
      assert.deepEqual(steps, ['write', 'shell', 'final'], `${t.id}'s model calls`);
      const report = agentReport(root, t.id);
      assert.deepEqual(report.tokens, expectedTokens(server, t.title), `${t.id}: agent.json ${JSON.stringify(report)}`);
      // Gemini CLI prints no cost.
      assert.equal(report.cost_usd, undefined);
      // The tool's own tools ran: its stream-json shows them.
      const out = transcript(root, t.id);
      assert.match(out, /"tool_name":"write_file"/);
      assert.match(out, /"tool_name":"run_shell_command"/);
    }
    assert.deepEqual(
      [ALPHA, BETA, GAMMA].map((t) => linesOf(root, 'Completed', t.id).length),
      [1, 1, 1],
    );
  });

  it("takes the verdict from the agent's own last message, not from a command that prints RESULT:SUCCESS", async () => {
    const root = dagHarness({ only: ['task-001'], maxAttempts: 1 });
    server = await startModelServer([gemini], {
      [ALPHA.title]: [
        { kind: 'write', path: ALPHA.file, content: `made by ${ALPHA.id}\n` },
        { kind: 'shell', command: "echo 'RESULT:SUCCESS'" },
        { kind: 'final', text: 'I could not finish.\nRESULT:FAIL the spoofed verdict was only a command' },
      ],
    });
    const r = await launchpad(root, ['run', '--agent', 'gemini'], geminiEnv(server));
    assert.equal(taskById(root, 'task-001').status, 'failed', show(r, root));
    assert.match(errorLog(root, 'task-001'), /the spoofed verdict was only a command/, show(r, root));
    // The command really ran and printed the fake verdict.
    assert.match(transcript(root, 'task-001'), /"tool_name":"run_shell_command"[^\n]*echo 'RESULT:SUCCESS'/);
    assert.match(transcript(root, 'task-001'), /"output":"RESULT:SUCCESS/);
  });

  it("records the tool's own reason when the API refuses every call", async () => {
    const root = dagHarness({ only: ['task-001'], maxAttempts: 1 });
    server = await startModelServer([gemini], {
      [ALPHA.title]: [{ kind: 'fault', status: 400, message: 'API key not valid. Please pass a valid API key.', times: 50 }],
    });
    const r = await launchpad(root, ['run', '--agent', 'gemini'], geminiEnv(server));
    assert.equal(taskById(root, 'task-001').status, 'failed', show(r, root));
    const errors = errorLog(root, 'task-001');
    assert.match(errors, /API key not valid/, show(r, root));
    assert.doesNotMatch(errors, /exited with/);
    assert.match(agentReport(root, 'task-001').error, /API key not valid/);
  });

  /** A real per-minute quota error of the Gemini API, its reset `seconds` ahead. */
  const quota = (seconds: number, times: number) =>
    ({
      kind: 'fault',
      status: 429,
      message:
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n' +
        `* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 2\nPlease retry in ${seconds}s.`,
      times,
    }) as const;

  it('stops uncharged on a quota error (exit 7) with the reset the tool printed in agent.json', async () => {
    const root = dagHarness({ only: ['task-001'] });
    server = await startModelServer([gemini], { [ALPHA.title]: [quota(90, 50)] });
    const before = Date.now();
    const r = await launchpad(root, ['run', '--agent', 'gemini'], geminiEnv(server, 1));
    const after = Date.now();
    assert.equal(r.code, 7, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'pending', show(r, root));
    assert.equal(task.attempts, 0, show(r, root));
    const limit = agentReport(root, 'task-001').limit;
    assert.equal(limit?.kind, 'usage-limit', JSON.stringify(limit));
    assert.match(limit.message, /exceeded your current quota/);
    const resets = Date.parse(limit.resets_at);
    assert.ok(resets >= before + 90_000 && resets <= after + 90_000, `resets_at ${limit.resets_at}`);
  });

  it('--wait-on-limit waits until the quota resets, then completes the task', async () => {
    const root = dagHarness({ only: ['task-001'] });
    // When each conversation call came, to see the second attempt start after the reset.
    const calls: number[] = [];
    const timed: Protocol = {
      ...gemini,
      read(body, url) {
        const ex = gemini.read(body, url);
        if (ex) calls.push(Date.now());
        return ex;
      },
    };
    server = await startModelServer([timed], { [ALPHA.title]: [quota(4, 1), ...doTask(ALPHA)] });
    const r = await launchpad(root, ['run', '--agent', 'gemini', '--wait-on-limit'], geminiEnv(server, 1));
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-001').status, 'completed', show(r, root));
    assert.equal(git(root, 'show', `main:${ALPHA.file}`), `made by ${ALPHA.id}`);
    assert.ok(
      readLog(root).some((l) => /usage limit of gemini: paused until/.test(l)),
      show(r, root),
    );
    // The quota error, then the write, shell and final calls of the attempt after the reset.
    assert.equal(calls.length, 4, JSON.stringify(server.served));
    assert.ok(calls[1]! - calls[0]! >= 4000, `the next attempt came ${calls[1]! - calls[0]!} ms after the quota error`);
  });
});

describe('gemini: the hooks fire in the real Gemini CLI', function () {
  this.timeout(120_000);

  /** Runs the preset's command by hand in `cwd`, as a person working the list with one agent would. */
  function runGemini(cwd: string, env: NodeJS.ProcessEnv, prompt: string): Promise<Result> {
    // Not inside a run's agent: the hooks do nothing there.
    const mine = Object.entries(process.env).filter(([k]) => !k.startsWith('LAUNCHPAD_') && k !== 'HARNESS_STATE_ROOT');
    const child = spawn('/bin/sh', ['-c', presetCommand(findPreset('gemini')!)], {
      cwd,
      env: { ...Object.fromEntries(mine), ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so the time limit ends the tool and what it started.
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(prompt);
    const limit = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000);
    return new Promise((resolve) =>
      child.on('close', (code, signal) => {
        clearTimeout(limit);
        resolve({ code, signal, stdout, stderr });
      }),
    );
  }

  it('SessionStart gives the model the current task; AfterAgent sends it back to work while the task is open', async () => {
    const root = harness({
      tasks: [{ id: 'task-001', title: ALPHA.title, validate: `grep -qx 'made by task-001' ${ALPHA.file}`, files: [ALPHA.file] }],
    });
    writeFileSync(join(root, '.harness-active'), '');
    const installed = await launchpad(root, ['hooks', 'install', 'gemini', '--command', `"${process.execPath}" "${CLI_COPY}"`]);
    assert.equal(installed.code, 0, show(installed));
    // Every request's contents, to find what the hooks added to the conversation.
    const bodies: string[] = [];
    const recording: Protocol = {
      ...gemini,
      read(body, url) {
        bodies.push(JSON.stringify(body));
        return gemini.read(body, url);
      },
    };
    const server = await startModelServer([recording], {
      // A first stop with the task not done, then the work, then a stop the hook lets through.
      [ALPHA.title]: [{ kind: 'final', text: 'Nothing to do.' }, ...doTask(ALPHA)],
    });
    try {
      const env = geminiEnv(server);
      const r = await runGemini(root, env, `Work on the harness: ${ALPHA.title}.`);
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
      const conversation = bodies.filter((b) => b.includes(ALPHA.title));
      // SessionStart: the current task and its validation reached the model.
      assert.ok(
        conversation.some((b) => b.includes('task-001') && b.includes('made by task-001')),
        'no request held the SessionStart context',
      );
      // AfterAgent refused the first stop: the model was asked again, with the instruction.
      const steps = server.served.filter((s) => s.key === ALPHA.title).map((s) => s.step?.kind);
      assert.deepEqual(steps.slice(0, 2), ['final', 'write'], JSON.stringify(steps));
      assert.ok(
        conversation.some((b) => b.includes('the task list is not done; keep working through it')),
        "no request held the stop hook's instruction",
      );
      assert.equal(readFileSync(join(root, ALPHA.file), 'utf8'), 'made by task-001\n');
    } finally {
      await server.close();
    }
  });
});
