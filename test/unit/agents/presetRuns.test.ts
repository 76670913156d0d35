// `launchpad run --agent <preset>` end to end, with a fake executable of the tool's name first on
// PATH: the exact arguments, stdin and environment the tool gets, the task completed from the
// verdict inside the tool's JSON, and what was parsed (agent.json in the attempt folder).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { AttemptPaths } from '../../../src/core/statePaths';
import { assertUnchanged, snapshot } from '../cli/util';
import { harness, launchpad, linesOf, type Result, show, taskById, tempDir } from '../controller/support';
import { type FakeOptions, installFake, readRecord } from './fakeAgents';
import * as T from './transcripts';

interface Case {
  preset: string;
  fake: FakeOptions;
  /** The arguments the tool must get; `prompt` is the prompt file's text. */
  argv: (prompt: string, promptFile: string) => string[];
  /** What it must read on stdin. */
  stdin: 'prompt' | 'nothing';
  /** Variables its command line sets for it. */
  vars?: Record<string, string>;
  checkpoint: string;
  report: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    preset: 'claude',
    fake: { output: T.CLAUDE_SUCCESS },
    argv: () => ['-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions'],
    stdin: 'prompt',
    checkpoint: 'wrote done.txt',
    report: { preset: 'claude', cost_usd: 0.0421, tokens: { input: 26212, output: 340, cache_read: 20012, cache_write: 5000 } },
  },
  {
    preset: 'codex',
    fake: { output: T.CODEX_SUCCESS },
    argv: () => ['exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-'],
    stdin: 'prompt',
    checkpoint: 'committed',
    report: { preset: 'codex', tokens: { input: 24763, output: 122, cache_read: 24448 } },
  },
  {
    preset: 'gemini',
    fake: { output: T.GEMINI_SUCCESS },
    argv: () => ['--output-format', 'stream-json', '--approval-mode', 'yolo'],
    stdin: 'prompt',
    // Every task's worktree is a folder gemini has never been told to trust.
    vars: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
    checkpoint: 'read the code',
    report: { preset: 'gemini', tokens: { input: 24939, output: 174, cache_read: 21263 } },
  },
  {
    preset: 'aider',
    fake: { output: T.AIDER_SUCCESS },
    argv: (_prompt, file) => [
      '--yes-always',
      '--no-pretty',
      '--no-check-update',
      '--no-show-release-notes',
      '--no-analytics',
      '--message-file',
      file,
    ],
    stdin: 'prompt',
    checkpoint: 'editing done.txt',
    report: { preset: 'aider', cost_usd: 0.02 },
  },
  {
    preset: 'opencode',
    fake: { output: T.OPENCODE_SUCCESS },
    argv: () => ['run', '--format', 'json', '--dangerously-skip-permissions'],
    stdin: 'prompt',
    checkpoint: 'planned',
    report: { preset: 'opencode', cost_usd: 0.03, tokens: { input: 3700, output: 170, cache_read: 1100, cache_write: 100, reasoning: 10 } },
  },
  {
    preset: 'qwen',
    fake: { output: T.QWEN_SUCCESS },
    argv: () => ['--output-format', 'stream-json', '--approval-mode', 'yolo'],
    stdin: 'prompt',
    checkpoint: 'wrote done.txt',
    report: { preset: 'qwen', tokens: { input: 3624, output: 129, cache_read: 603 } },
  },
  {
    preset: 'cursor-agent',
    fake: { output: T.CURSOR_SUCCESS },
    // "$(cat file)" drops the file's trailing newlines, as any shell does.
    argv: (prompt) => ['-p', '--force', '--trust', '--output-format', 'stream-json', prompt.replace(/\n+$/, '')],
    stdin: 'nothing',
    checkpoint: 'edited',
    report: { preset: 'cursor-agent' },
  },
  {
    preset: 'copilot',
    fake: { output: T.COPILOT_SUCCESS },
    argv: (prompt, file) => [
      '--allow-all-tools',
      '--allow-all-paths',
      '--no-ask-user',
      '--output-format',
      'json',
      '-p',
      prompt.replace(/\n+$/, ''),
      '--usage-output-file',
      `${file}.usage.json`,
    ],
    stdin: 'nothing',
    checkpoint: 'edited',
    report: { preset: 'copilot', tokens: { input: 3900, output: 130, cache_read: 2900, cache_write: 0 }, premium_requests: 1 },
  },
];

/** A harness with one task, fakes of `presets` first on PATH, and where they record. */
function setup(fakes: Array<[string, FakeOptions]>, opts: { sessionConfig?: Record<string, unknown>; maxAttempts?: number } = {}) {
  const root = harness({
    tasks: [{ id: 'task-001', ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}) }],
    sessionConfig: opts.sessionConfig,
  });
  const bin = tempDir('launchpad-fake-bin-');
  const log = tempDir('launchpad-fake-log-');
  for (const [name, fake] of fakes) installFake(bin, name, fake);
  const env = { PATH: `${bin}:${process.env.PATH}`, FAKE_AGENT_LOG: log };
  return { root, log, env };
}

function attemptDir(root: string, attempt = 1): string {
  return join(root, '.launchpad', 'runs', 'task-001', `attempt-${attempt}`);
}

function agentJson(root: string, attempt = 1): Record<string, unknown> {
  return JSON.parse(readFileSync(new AttemptPaths(attemptDir(root, attempt)).agentReport, 'utf8')) as Record<string, unknown>;
}

function assertCompleted(r: Result, root: string): void {
  assert.equal(r.code, 0, show(r, root));
  assert.equal(taskById(root, 'task-001').status, 'completed', show(r, root));
}

describe('agent presets end to end (launchpad run --agent NAME, fake tools on PATH)', function () {
  this.timeout(120_000);

  for (const c of CASES) {
    it(`${c.preset}: the exact arguments, stdin and environment; the verdict inside its output completes the task; cost and tokens recorded`, async () => {
      const { root, log, env } = setup([[c.preset, c.fake]]);
      const vars = Object.keys(c.vars ?? {});
      const r = await launchpad(root, ['run', '--agent', c.preset], { ...env, FAKE_RECORD_VARS: vars.join(',') });
      assertCompleted(r, root);

      const rec = readRecord(log, c.preset);
      for (const name of vars) assert.equal(rec.env[name], c.vars![name], name);
      const promptFile = join(attemptDir(root), 'prompt.md');
      const prompt = readFileSync(promptFile, 'utf8');
      assert.ok(prompt.includes('task-001'), "the prompt is the task's");
      assert.deepEqual(rec.argv, c.argv(prompt, promptFile));
      assert.equal(rec.stdin, c.stdin === 'prompt' ? prompt : '');
      if (c.preset === 'aider') assert.equal(rec.messageFile, prompt);
      assert.equal(rec.env.LAUNCHPAD_TASK_ID, 'task-001');
      assert.equal(rec.env.LAUNCHPAD_PROMPT_FILE, promptFile);
      assert.equal(rec.env.LAUNCHPAD_ATTEMPT, '1');
      assert.equal(rec.env.LAUNCHPAD_BRANCH, 'harness-task-001');
      assert.equal(rec.cwd, rec.env.LAUNCHPAD_WORKTREE);

      assert.deepEqual(agentJson(root), c.report);
      const task = taskById(root, 'task-001');
      assert.deepEqual(
        task.checkpoints?.map((x) => x.description),
        [c.checkpoint],
        "each checkpoint once, from the agent's own message",
      );
      assert.equal(linesOf(root, 'CHECKPOINT', 'task-001').length, 1);
      // The transcript keeps the tool's own output as it printed it.
      assert.ok(readFileSync(join(attemptDir(root), 'transcript.log'), 'utf8').includes(c.fake.output.split('\n')[0]!));
    });
  }

  it('LAUNCHPAD_AGENT=codex with --agent-args: the arguments go before the prompt\'s "-", quoted as given', async () => {
    const { root, log, env } = setup([['codex', { output: T.CODEX_SUCCESS }]]);
    const r = await launchpad(root, ['run', `--agent-args=--model 'o3 mini' -c model_reasoning_effort=high`], {
      ...env,
      LAUNCHPAD_AGENT: 'codex',
    });
    assertCompleted(r, root);
    assert.deepEqual(readRecord(log, 'codex').argv, [
      'exec',
      '--json',
      '--dangerously-bypass-approvals-and-sandbox',
      '--model',
      'o3 mini',
      '-c',
      'model_reasoning_effort=high',
      '-',
    ]);
  });

  it('session_config.agent "gemini" with session_config.agent_args', async () => {
    const { root, log, env } = setup([['gemini', { output: T.GEMINI_SUCCESS }]], {
      sessionConfig: { agent: 'gemini', agent_args: { gemini: ['--model', 'gemini-2.5-flash'], claude: ['--model', 'opus'] } },
    });
    const r = await launchpad(root, ['run'], env);
    assertCompleted(r, root);
    assert.deepEqual(readRecord(log, 'gemini').argv, [
      '--output-format',
      'stream-json',
      '--approval-mode',
      'yolo',
      '--model',
      'gemini-2.5-flash',
    ]);
  });

  it("a usage limit: not the task's failure (exit 7, the attempt given back, the tool's reset words shown); the limit and its reset time in agent.json", async () => {
    const { root, env } = setup([['claude', { output: T.CLAUDE_USAGE_LIMIT, work: false }]], { maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'claude'], env);
    assert.equal(r.code, 7, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'pending');
    assert.equal(task.attempts, 0);
    assert.deepEqual(task.error_log, []);
    // The tool's reset time, or its words once that time has passed.
    assert.match(r.stdout, /usage limit of claude .*(it lifts at 2026-01-01T16:00:00Z|the tool said it resets 3pm \(Europe\/Berlin\))/);
    assert.deepEqual(agentJson(root).limit, {
      kind: 'usage-limit',
      message: "You've hit your limit · resets 3pm (Europe/Berlin)",
      resets_at: '2026-01-01T16:00:00.000Z',
      reset_text: '3pm (Europe/Berlin)',
    });
  });

  it("a run without a verdict fails with the tool's own words and its exit code (Gemini CLI refusing an untrusted folder)", async () => {
    const refusal =
      'Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode.';
    const { root, env } = setup(
      [
        [
          'gemini',
          {
            output: '{"type":"init","timestamp":"2026-08-20T12:00:00.000Z","session_id":"s1","model":"gemini-2.5-pro"}\n',
            stderr: `${refusal}\n`,
            exitCode: 55,
            work: false,
          },
        ],
      ],
      { maxAttempts: 1 },
    );
    const r = await launchpad(root, ['run', '--agent', 'gemini'], env);
    assert.equal(r.code, 1, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'failed');
    assert.deepEqual(task.error_log, [`[AGENT_FAIL] agent exited with 55 without a RESULT:SUCCESS or RESULT:FAIL line: ${refusal}`]);
  });

  it('"high demand" with no overload status is the attempt\'s failure, even with --wait-on-limit: charged, not a pause', async () => {
    const failed =
      '{"type":"turn.failed","error":{"message":"We\'re currently experiencing high demand, which may cause temporary errors."}}\n';
    const { root, env } = setup([['codex', { output: failed, exitCode: 1, work: false }]], { maxAttempts: 1 });
    const r = await launchpad(root, ['run', '--agent', 'codex', '--wait-on-limit'], env);
    assert.equal(r.code, 1, show(r, root));
    const task = taskById(root, 'task-001');
    assert.equal(task.status, 'failed');
    assert.equal(task.attempts, 1);
    assert.deepEqual(task.error_log, ["[AGENT_FAIL] codex: We're currently experiencing high demand, which may cause temporary errors."]);
    assert.equal(agentJson(root).limit, undefined);
    assert.equal(linesOf(root, 'WARN').filter((l) => /paused|waiting/.test(l.message)).length, 0, show(r, root));
  });

  it('a raw command line naming a tool is run as written, without a parser (no agent.json)', async () => {
    const { root, log, env } = setup([['claude', { output: 'RESULT:SUCCESS\n' }]]);
    const r = await launchpad(root, ['run', '--agent', 'claude --model sonnet'], env);
    assertCompleted(r, root);
    assert.deepEqual(readRecord(log, 'claude').argv, ['--model', 'sonnet']);
    assert.equal(existsSync(new AttemptPaths(attemptDir(root)).agentReport), false);
  });

  for (const [what, args, sessionConfig, message] of [
    [
      '--agent-args with a command line',
      ['run', '--agent', './agent.sh', '--agent-args=--model x'],
      {},
      /--agent-args: extra arguments go to an agent preset/,
    ],
    [
      'agent_args naming no preset',
      ['run', '--agent', 'claude'],
      { agent_args: { claud: ['--model', 'x'] } },
      /harness-tasks.json: session_config.agent_args: "claud" is not an agent preset/,
    ],
    [
      'both agent and agent_command',
      ['run'],
      { agent: 'claude', agent_command: './agent.sh' },
      /session_config.agent and session_config.agent_command are both set/,
    ],
  ] as const) {
    it(`bad agent settings (${what}) exit 2 naming the setting, and change nothing`, async () => {
      const { root, env } = setup([], { sessionConfig });
      const before = snapshot(root);
      const r = await launchpad(root, [...args], env);
      assert.equal(r.code, 2, show(r, root));
      assert.match(r.stderr, message);
      assertUnchanged(before, root, what);
    });
  }
});
