// Seeded generators for the benchmarks' data: a task file of any size (a project part-way
// through, as the controller would see it) and a progress log in the log grammar. The same
// seed gives byte-identical output, so figures from two runs are about the same data.
import { closeSync, openSync, writeSync } from 'node:fs';

import { rng as makeRng } from './harness.mjs';

const AREAS = [
  'auth',
  'api',
  'billing',
  'cache',
  'cli',
  'config',
  'db',
  'docs',
  'events',
  'export',
  'gateway',
  'i18n',
  'import',
  'jobs',
  'logging',
  'mail',
  'metrics',
  'middleware',
  'models',
  'notifications',
  'payments',
  'queue',
  'reports',
  'search',
  'security',
  'sessions',
  'storage',
  'sync',
  'ui',
  'users',
  'webhooks',
  'workers',
];
const SUBS = ['core', 'handlers', 'routes', 'schema', 'util', 'adapters', 'views', 'tests'];
const VERBS = ['Implement', 'Refactor', 'Add', 'Fix', 'Migrate', 'Document', 'Harden', 'Optimise', 'Split', 'Test'];
const NOUNS = [
  'endpoint',
  'validator',
  'retry policy',
  'pagination',
  'rate limiter',
  'serializer',
  'index',
  'cache layer',
  'error handling',
  'webhook signature check',
  'background job',
  'permission check',
];
const CATEGORIES = ['TEST_FAIL', 'AGENT_FAIL', 'TIMEOUT', 'MERGE_CONFLICT', 'TASK_EXEC'];
const REASONS = {
  TEST_FAIL: (r, area) => `${r.int(1, 12)} of ${r.int(20, 400)} tests failed in src/${area}: expected 429 got 200`,
  AGENT_FAIL: (r, area) =>
    r.pick([
      `Sub-agent could not resolve import errors in src/${area}/index.ts`,
      `Sub-agent gave up: missing fixture for ${area}`,
      'Sub-agent reported RESULT:FAIL without a reason',
    ]),
  TIMEOUT: (r) => `validation exceeded ${r.pick([120, 300, 600])}s; process group killed`,
  MERGE_CONFLICT: (r, area) => `conflict in src/${area}/${r.pick(SUBS)}/index.ts after rebase retry`,
  TASK_EXEC: (r) => `agent exited with code ${r.int(1, 137)} before RESULT line`,
};

function ts(base, seconds) {
  return new Date(base + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A task file object (not yet validated) with `n` tasks in a layered DAG: each task depends on
 * 1–4 tasks of the previous three layers, mostly near its own position (work streams), now and
 * then anywhere. The history is consistent: a task is completed only when its dependencies
 * are. Layers before the frontier (~45%) are done; around the frontier are running, failed
 * (retryable and exhausted), already-blocked and pending tasks; beyond it everything waits.
 * Exhausted failures leave chains of tasks to block.
 */
export function generateTaskFile(n, { seed = 42, layerSize = 250, inProgress = 2 } = {}) {
  const r = makeRng(seed);
  const width = Math.max(3, String(n).length);
  const id = (i) => `task-${String(i + 1).padStart(width, '0')}`;
  const layers = Math.ceil(n / layerSize);
  const frontier = Math.floor(layers * 0.45);
  const base = Date.parse('2025-07-01T10:00:00Z');
  const tasks = [];
  const byId = new Map();
  let running = 0;

  for (let i = 0; i < n; i++) {
    const layer = Math.floor(i / layerSize);
    const pos = i % layerSize;
    const area = AREAS[Math.floor((pos / layerSize) * AREAS.length)];
    const depends_on = [];
    if (layer > 0) {
      const k = r.weighted([
        [1, 3],
        [2, 4],
        [3, 2],
        [4, 1],
      ]);
      for (let j = 0; j < k; j++) {
        const back = Math.min(
          layer,
          r.weighted([
            [1, 6],
            [2, 2],
            [3, 1],
          ]),
        );
        const near = r.chance(0.99);
        const p = near ? Math.min(layerSize - 1, Math.max(0, pos + r.int(-4, 4))) : r.int(0, layerSize - 1);
        const dep = id((layer - back) * layerSize + p);
        if (!depends_on.includes(dep)) depends_on.push(dep);
      }
    }
    let files_hint;
    if (r.chance(0.03)) files_hint = [];
    else {
      files_hint = [`src/${area}/${r.pick(SUBS)}/`];
      if (r.chance(0.5)) files_hint.push(`src/${area}/${r.pick(SUBS)}/${r.pick(['index', 'types', 'service', 'client'])}.ts`);
      if (r.chance(0.15)) files_hint.push(`test/${area}/**/*.test.ts`);
    }
    const task = {
      id: id(i),
      title: `${r.pick(VERBS)} ${r.pick(NOUNS)} for ${area}`,
      status: 'pending',
      priority: r.weighted([
        ['P0', 1],
        ['P1', 7],
        ['P2', 2],
      ]),
      depends_on,
      attempts: 0,
      max_attempts: 3,
      context: `Work in src/${area}/: ${r.pick(NOUNS)} with tests; keep the public API of ${area} unchanged and update the docs.`,
      files_hint,
      validation: r.chance(0.01)
        ? { command: null }
        : { command: `npm test -- --testPathPattern=${area}`, timeout_seconds: r.pick([120, 300, 600]) },
      on_failure: { cleanup: null },
      error_log: [],
      agent_id: null,
      worktree_branch: null,
      completed_at: null,
    };

    const fail = (exhausted) => {
      const attempts = exhausted ? 3 : r.int(1, 2);
      task.status = 'failed';
      task.attempts = attempts;
      for (let a = 0; a < attempts; a++) {
        const cat = a === attempts - 1 && r.chance(0.1) ? 'MERGE_CONFLICT' : r.pick(CATEGORIES);
        task.error_log.push(`[${cat}] ${REASONS[cat](r, area)}`);
      }
      task.failed_at = ts(base, i * 60 + r.int(0, 59));
    };
    const complete = () => {
      task.status = 'completed';
      task.attempts = r.weighted([
        [1, 8],
        [2, 2],
      ]);
      task.completed_at = ts(base, i * 60);
    };

    const deps = depends_on.map((d) => byId.get(d));
    const depsDone = deps.every((d) => d.status === 'completed');
    const failedDep = deps.find(
      (d) => d.status === 'failed' && (d.attempts >= d.max_attempts || d.error_log.at(-1)?.startsWith('[DEPENDENCY]')),
    );
    if (!depsDone) {
      // Waiting; behind a permanent failure, an earlier run may already have marked it.
      if (failedDep && r.chance(0.5)) {
        task.status = 'failed';
        task.error_log.push(`[DEPENDENCY] Blocked by failed ${failedDep.id}`);
      }
    } else if (layer < frontier - 3) {
      if (r.chance(0.998)) complete();
      else fail(false);
    } else if (layer < frontier) {
      const roll = r.next();
      if (roll < 0.97) complete();
      else if (roll < 0.994) fail(false);
      else fail(true);
    } else if (layer < frontier + 3) {
      const roll = r.next();
      if (roll < 0.4) complete();
      else if (roll < 0.5) fail(false);
      else if (roll < 0.515) fail(true);
      else if (running < inProgress && r.chance(0.1)) {
        running++;
        task.status = 'in_progress';
        task.attempts = 1;
        task.agent_id = `agent_${i.toString(16)}`;
        task.worktree_branch = `harness-${task.id}`;
      }
    }
    tasks.push(task);
    byId.set(task.id, task);
  }

  return {
    version: 3,
    created: '2025-07-01T10:00:00Z',
    session_config: { max_tasks_per_session: 20, max_sessions: 50, max_parallel_agents: 3 },
    session_count: 12,
    last_session: '2025-07-09T18:00:00Z',
    tasks,
  };
}

/** Task ids of the log: task-0001 … task-NNNN (four digits, as `--task task-0042`). */
const logTaskId = (i) => `task-${String(i).padStart(4, '0')}`;

/**
 * A progress log of exactly `lines` lines in the log grammar, written to `file` in
 * large writes. Sessions of a few thousand lines: INIT, LOCK, then batches of DISPATCH,
 * AGENT_DONE, VALIDATE, MERGE/Completed or DISCARD/ERROR, checkpoints, warnings, STATS.
 * Returns { lines, bytes }.
 */
export function generateLog(file, lines, { seed = 7, tasks = 5000, append = false, startSession = 1 } = {}) {
  const r = makeRng(seed);
  const fd = openSync(file, append ? 'a' : 'w');
  const base = Date.parse('2025-07-01T10:00:00Z');
  let written = 0;
  let bytes = 0;
  let clock = 0;
  let session = startSession;
  let sessionLines = 0;
  let buf = [];
  let bufLen = 0;
  const flush = () => {
    if (!buf.length) return;
    const s = buf.join('');
    writeSync(fd, s);
    bytes += Buffer.byteLength(s);
    buf = [];
    bufLen = 0;
  };
  const emit = (type, taskId, category, message) => {
    if (written >= lines) return;
    clock += r.int(0, 3);
    let line = `[${ts(base, clock)}] [SESSION-${session}] ${type}`;
    if (taskId) line += ` [${taskId}]`;
    if (category) line += ` [${category}]`;
    if (message) line += ` ${message}`;
    line += '\n';
    buf.push(line);
    bufLen += line.length;
    written++;
    sessionLines++;
    if (bufLen > 4 << 20) flush();
  };

  try {
    while (written < lines) {
      // Session start.
      emit('INIT', null, null, `Launchpad runner initialized for project /home/dev/projects/acme-platform (session ${session})`);
      emit('INIT', null, null, 'Environment health check: PASS (harness-init.sh exited 0 in 1.84s)');
      emit(
        'LOCK',
        null,
        null,
        `acquired (pid=${r.int(1000, 99999)} identity=boot:${r.int(100000, 999999)} host=build-agent-${r.int(1, 9)})`,
      );
      if (r.chance(0.3))
        emit(
          'RECOVERY',
          logTaskId(r.int(1, tasks)),
          null,
          'in_progress with no live agent; worktree discarded, task reset to pending (attempt kept)',
        );
      const sessionLength = r.int(1500, 3000);
      while (written < lines && sessionLines < sessionLength) {
        const k = r.weighted([
          [1, 2],
          [2, 3],
          [3, 5],
        ]);
        const batch = [];
        while (batch.length < k) {
          const t = logTaskId(r.int(1, tasks));
          if (!batch.includes(t)) batch.push(t);
        }
        emit('BATCH', null, null, `dispatching ${k} tasks: [${batch.join(', ')}]`);
        for (const t of batch) {
          const attempt = r.int(1, 3);
          emit(
            'DISPATCH',
            t,
            null,
            `agent=agent_${r.int(0, 0xffffff).toString(16)} worktree=harness-${t} attempt=${attempt} prompt=.launchpad/runs/${t}/${attempt}/prompt.md`,
          );
        }
        for (const t of batch) {
          const area = AREAS[r.int(0, AREAS.length - 1)];
          if (r.chance(0.3))
            emit('CHECKPOINT', t, null, `step=${r.int(1, 4)}/5 "wrote ${r.pick(NOUNS)} for src/${area} and its unit tests"`);
          const agentOk = r.chance(0.85);
          emit(
            'AGENT_DONE',
            t,
            null,
            `agent=agent_${r.int(0, 0xffffff).toString(16)} result=${agentOk ? 'success' : 'error'} duration=${r.int(30, 3600)}s transcript_bytes=${r.int(2000, 900000)}`,
          );
          if (!agentOk) {
            emit('DISCARD', t, null, `worktree=harness-${t} reason="agent reported failure"`);
            const cat = r.weighted([
              ['AGENT_FAIL', 6],
              ['TASK_EXEC', 2],
              ['TIMEOUT', 2],
            ]);
            emit('ERROR', t, cat, REASONS[cat](r, area));
            continue;
          }
          const pass = r.chance(0.8);
          const timedOut = !pass && r.chance(0.2);
          emit(
            'VALIDATE',
            t,
            null,
            `command="npm test -- --testPathPattern=src/${area}" result=${pass ? 'PASS' : timedOut ? 'TIMEOUT' : 'FAIL'} duration=${r.int(2, 300)}s exit=${pass ? 0 : timedOut ? 124 : 1}`,
          );
          if (!pass) {
            emit('DISCARD', t, null, `worktree=harness-${t} reason="${timedOut ? 'validation timed out' : 'validation failed'}"`);
            const cat = timedOut ? 'TIMEOUT' : 'TEST_FAIL';
            emit('ERROR', t, cat, REASONS[cat](r, area));
            continue;
          }
          if (r.chance(0.04)) {
            emit('WARN', t, null, `rebase onto main needed before merge; retrying merge of harness-${t} once`);
            if (r.chance(0.5)) {
              emit('DISCARD', t, null, `worktree=harness-${t} reason="merge conflict"`);
              emit('ERROR', t, 'MERGE_CONFLICT', REASONS.MERGE_CONFLICT(r, area));
              continue;
            }
          }
          emit(
            'MERGE',
            t,
            null,
            `branch=harness-${t} into=main (commit ${r.int(0, 0xfffffff).toString(16).padStart(7, '0')}) files_changed=${r.int(1, 30)} insertions=${r.int(1, 900)} deletions=${r.int(0, 400)}`,
          );
          emit('Completed', t, null, `${r.pick(VERBS).toLowerCase()}ed ${r.pick(NOUNS)} in src/${area}; attempts=${r.int(1, 3)}`);
        }
        if (r.chance(0.01))
          emit('ERROR', null, 'ENV_SETUP', 'harness-init.sh failed once (exit 1: npm ci could not reach the registry); retried and passed');
        if (r.chance(0.005)) {
          const t = logTaskId(r.int(1, tasks));
          emit('ERROR', t, 'DEPENDENCY', `Blocked by failed ${logTaskId(r.int(1, tasks))}`);
        }
      }
      emit(
        'STATS',
        null,
        null,
        `tasks_total=${tasks} completed=${r.int(0, tasks)} failed=${r.int(0, 200)} in_batch=0 pending=${r.int(0, tasks)} blocked=${r.int(0, 50)} attempts_total=${r.int(tasks, tasks * 2)}`,
      );
      session++;
      sessionLines = 0;
    }
    flush();
  } finally {
    closeSync(fd);
  }
  return { lines: written, bytes, nextSession: session };
}

/**
 * A long project history to put in front of the tasks a benchmark runs: generateTaskFile's DAG
 * with its past completed and its unfinished part a backlog no run can start — the tasks that
 * were running or had failed now wait for a person (no validation command yet), and everything
 * behind them waits (earlier [DEPENDENCY] failures stay). A run's every pass still walks the
 * backlog. Ids are `done-NNNN`. Raw objects, not validated.
 */
export function generateHistory(n, { seed = 42 } = {}) {
  const { tasks } = generateTaskFile(n, { seed, inProgress: 0 });
  const rename = (id) => id.replace(/^task-/, 'done-');
  const status = new Map();
  for (const t of tasks) {
    t.id = rename(t.id);
    t.depends_on = t.depends_on.map(rename);
    const depsDone = t.depends_on.every((d) => status.get(d) === 'completed');
    const dependencyFailure = t.status === 'failed' && t.error_log.at(-1)?.startsWith('[DEPENDENCY]');
    if (t.status === 'failed' && !dependencyFailure) {
      t.status = 'pending';
      t.validation = { command: null };
      t.failed_at = null;
    } else if (t.status === 'pending' && depsDone) {
      t.status = 'completed';
      t.attempts = 1;
      t.completed_at = '2025-07-09T12:00:00Z';
    }
    status.set(t.id, t.status);
  }
  return tasks;
}
