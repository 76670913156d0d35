// The recovery table (attempt/lifecycle.ts), one test per row per executor that runs it: a
// session of its own (the worktree executor), a concurrent worker taking over a lapsed claim,
// and a run in place go through the same rows (in place has no merge of its own, and the base it
// rolls back to can be gone). Each case leaves an in-progress attempt on disk as a dead controller
// or worker would have, then a run decides: the row's RECOVERY line, the task's end, and what
// its count became (no row counts another attempt; a start afresh and a question give it back).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { agentCmd, defaultWorktreeRoot, git, harness, linesOf, patchTask, run, show, taskById, writeFiles } from './support';

const DEAD = 'agent_dead0001';

type Executor = 'worktree' | 'concurrent';

interface Row {
  action: string;
  /** Leaves the attempt as a crash would have (after the task is marked in progress). */
  leave: (root: string) => void;
  /** The RECOVERY line the row writes (its action and reason). */
  line: RegExp;
  status: 'completed' | 'failed' | 'awaiting_answer';
  attempts: number;
  /** The agent a run gets: the row must not need it, unless it resumes or starts afresh. */
  agent: string;
}

function worktreeOf(root: string): string {
  const wt = join(defaultWorktreeRoot(root), 'a');
  git(root, 'worktree', 'add', '-q', '-b', 'harness-a', wt, 'HEAD');
  return wt;
}

function commit(wt: string, file: string): void {
  writeFiles(wt, { [`src/a/${file}`]: `${file}\n` });
  git(wt, 'add', '-A');
  git(wt, 'commit', '-q', '-m', `[a] ${file}`);
}

function verdict(root: string, line: string): void {
  const dir = join(root, '.launchpad/runs/a/attempt-1');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'session'), '1\n');
  writeFileSync(join(dir, 'verdict'), `${line}\nagent=${DEAD}\n`);
}

const FAILS = agentCmd('fails.sh');
const DOES_IT = agentCmd('writes-done.sh');

const ROWS: Row[] = [
  {
    action: 'record-failure',
    leave: (root) => {
      commit(worktreeOf(root), 'half.txt');
      verdict(root, 'fail [AGENT_FAIL] gave up');
    },
    line: /^action="recorded failure"/,
    status: 'failed',
    attempts: 1,
    agent: FAILS,
  },
  {
    action: 'complete',
    leave: (root) => {
      commit(worktreeOf(root), 'done.txt');
      git(root, 'merge', '-q', '--no-ff', '-m', 'Merge [a] Task a', 'harness-a');
    },
    line: /^action="marked completed" reason="its branch was already merged/,
    status: 'completed',
    attempts: 1,
    agent: FAILS,
  },
  {
    action: 'start-afresh (no worktree, no branch)',
    leave: () => undefined,
    line: /^action="started afresh" reason="no worktree or branch found"$/,
    status: 'completed',
    attempts: 1,
    agent: DOES_IT,
  },
  {
    action: 'validate-and-merge',
    leave: (root) => {
      commit(worktreeOf(root), 'done.txt');
      verdict(root, 'success');
    },
    line: /^action="validated orphaned worktree"/,
    status: 'completed',
    attempts: 1,
    agent: FAILS,
  },
  {
    action: 'start-afresh (no progress)',
    leave: (root) => void worktreeOf(root),
    line: /^action="started afresh" reason="interrupted before any progress"$/,
    status: 'completed',
    attempts: 1,
    agent: DOES_IT,
  },
  {
    action: 'await-answer',
    leave: (root) => {
      commit(worktreeOf(root), 'part1.txt');
      verdict(root, 'question Which port?');
    },
    line: /^action="recorded question" reason="the agent asked a question; the controller stopped before recording it"$/,
    status: 'awaiting_answer',
    attempts: 0,
    agent: FAILS,
  },
  {
    action: 'resume',
    leave: (root) => commit(worktreeOf(root), 'part1.txt'),
    line: /^action="resumed agent" reason="interrupted without a verdict: 1 commit\(s\)/,
    status: 'completed',
    attempts: 1,
    agent: DOES_IT,
  },
];

describe('controller: the recovery table, row by row, in each executor', function () {
  this.timeout(120_000);

  for (const executor of ['worktree', 'concurrent'] as Executor[]) {
    for (const row of ROWS) {
      it(`${executor}: ${row.action}`, async () => {
        const concurrent = executor === 'concurrent';
        const root = harness({
          tasks: [{ id: 'a', maxAttempts: 1 }],
          ...(concurrent ? { sessionConfig: { concurrency_mode: 'concurrent', lease_seconds: 30 } } : {}),
        });
        patchTask(root, 'a', {
          status: 'in_progress',
          attempts: 1,
          agent_id: DEAD,
          worktree_branch: 'harness-a',
          started_at_commit: git(root, 'rev-parse', 'HEAD'),
          // A dead worker's claim, lapsed a minute ago.
          ...(concurrent
            ? { claimed_by: 'dead-worker', lease_expires_at: new Date(Date.now() - 60_000).toISOString(), claim_generation: 1 }
            : {}),
        });
        row.leave(root);
        const r = await run(root, row.agent, [], concurrent ? { HARNESS_WORKER_ID: 'w2' } : {});
        assert.equal(r.code, { completed: 0, failed: 1, awaiting_answer: 8 }[row.status], show(r, root));
        const lines = linesOf(root, 'RECOVERY', 'a').map((l) => l.message);
        if (concurrent)
          assert.match(
            lines.shift() ?? '',
            /^action="took over claim" worker=w2 generation=2 reason="claim of dead-worker \(generation 1\) lapsed/,
          );
        assert.equal(lines.length, 1, lines.join('\n'));
        assert.match(lines[0]!, row.line);
        const t = taskById(root, 'a');
        assert.deepEqual([t.status, t.attempts], [row.status, row.attempts]);
        assert.equal(t.error_log.length, row.status === 'failed' ? 1 : 0, "only the agent's own failure is recorded");
        if (row.status === 'awaiting_answer') {
          assert.equal(t.question?.text, 'Which port?');
          assert.equal(git(root, 'log', '-1', '--format=%s', 'harness-a'), '[a] part1.txt', 'its worktree and branch are kept');
        }
      });
    }
  }

  describe('in place', () => {
    interface InPlaceRow {
      action: string;
      /** Leaves the main working tree as a crash would have (the task in progress from `base`). */
      leave: (root: string) => void;
      line: RegExp | undefined;
      code: number;
      status: 'completed' | 'failed' | 'pending';
      attempts: number;
      agent: string;
    }
    const work = (root: string) => {
      writeFiles(root, { 'src/a/done.txt': 'done\n' });
      git(root, 'add', 'src/a');
      git(root, 'commit', '-q', '-m', '[a] work');
    };
    const rows: InPlaceRow[] = [
      {
        action: 'record-failure',
        leave: (root) => {
          work(root);
          verdict(root, 'fail [AGENT_FAIL] gave up');
        },
        line: /^action="recorded failure"/,
        code: 1,
        status: 'failed',
        attempts: 1,
        agent: FAILS,
      },
      {
        action: 'validate-and-merge',
        leave: (root) => {
          work(root);
          verdict(root, 'success');
        },
        line: /^action="validated in place"/,
        code: 0,
        status: 'completed',
        attempts: 1,
        agent: FAILS,
      },
      {
        action: 'start-afresh',
        leave: () => undefined,
        line: /^action="started afresh" reason="interrupted before any progress"/,
        code: 0,
        status: 'completed',
        attempts: 1,
        agent: DOES_IT,
      },
      {
        action: 'resume',
        leave: (root) => writeFiles(root, { 'src/a/half.txt': 'half\n' }),
        line: /^action="resumed in place" reason="interrupted without a verdict"/,
        code: 0,
        status: 'completed',
        attempts: 1,
        agent: DOES_IT,
      },
      {
        action: 'stop-base-gone',
        leave: (root) => patchTask(root, 'a', { started_at_commit: 'f'.repeat(40) }),
        line: undefined,
        code: 2,
        status: 'pending',
        attempts: 0,
        agent: FAILS,
      },
    ];
    for (const row of rows) {
      it(`in place: ${row.action}`, async () => {
        const root = harness({ tasks: [{ id: 'a', maxAttempts: 1 }], sessionConfig: { isolation: 'in-place' } });
        patchTask(root, 'a', {
          status: 'in_progress',
          attempts: 1,
          agent_id: DEAD,
          worktree_branch: null,
          started_at_commit: git(root, 'rev-parse', 'HEAD'),
        });
        row.leave(root);
        const r = await run(root, row.agent);
        assert.equal(r.code, row.code, show(r, root));
        const lines = linesOf(root, 'RECOVERY', 'a').map((l) => l.message);
        if (row.line) {
          assert.equal(lines.length, 1, lines.join('\n'));
          assert.match(lines[0]!, row.line);
        } else {
          assert.deepEqual(lines, []);
          assert.match(linesOf(root, 'ERROR', 'a')[0]!.message, /^the base commit f{40} of a is gone .*\(not charged\)$/);
        }
        const t = taskById(root, 'a');
        assert.deepEqual([t.status, t.attempts], [row.status, row.attempts]);
        assert.equal(t.error_log.length, row.status === 'failed' ? 1 : 0, "only the agent's own failure is recorded");
      });
    }
  });
});
