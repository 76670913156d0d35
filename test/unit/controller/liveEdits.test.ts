// The task file changes while a run goes on: a task added by `launchpad add`, or a failed task
// made eligible again by `launchpad retry`, is picked up by that same run; and a person's
// commands beside the run, however many and however slow, delay its writes but never stop it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

import {
  agentCmd,
  batches,
  byTask,
  gates,
  harness,
  launchpad,
  linesOf,
  read,
  show,
  startRun,
  taskById,
  waitFor,
  waitForLog,
} from './support';

describe('controller: edits while a run goes on', function () {
  this.timeout(120_000);

  it('a task added with `launchpad add` during a run is run by that run', async () => {
    const g = gates();
    const root = harness({ tasks: [{ id: 'task-001' }] });
    const started = startRun(root, `${agentCmd('gate.sh')} ${agentCmd('writes-done.sh')}`, [], { GATE_DIR: g.dir });
    await waitFor('task-001 to start', () => g.waiting('task-001'));
    const add = await launchpad(root, ['add', 'Second task', '--files', 'src/task-002/', '--validate', 'test -f src/task-002/done.txt']);
    assert.equal(add.code, 0, show(add));
    assert.equal(add.stdout.trim(), 'task-002');
    g.open('task-001');
    g.open('task-002');
    const r = await started.done;
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-002').status, 'completed');
    assert.deepEqual(batches(root), [['task-001'], ['task-002']]);
    assert.deepEqual([...new Set(linesOf(root, 'DISPATCH').map((l) => l.session))], [1]);
  });

  it('a task made eligible with `launchpad retry` during a run is retried by that run', async () => {
    const g = gates();
    const root = harness({ tasks: [{ id: 'task-001', maxAttempts: 1 }, { id: 'task-002' }] });
    const agentLine = byTask({ 'task-001': agentCmd('fails-unless-retried.sh') }, `${agentCmd('gate.sh')} ${agentCmd('writes-done.sh')}`);
    const started = startRun(root, agentLine, [], { GATE_DIR: g.dir });
    await waitForLog(root, /ERROR \[task-001\] \[AGENT_FAIL\]/);
    await waitFor('task-002 to start', () => g.waiting('task-002'));
    const retry = await launchpad(root, ['retry', 'task-001']);
    assert.equal(retry.code, 0, show(retry));
    g.open('task-002');
    const r = await started.done;
    assert.equal(r.code, 0, show(r, root));
    const t = taskById(root, 'task-001');
    assert.equal(t.status, 'completed');
    assert.deepEqual(batches(root), [['task-001', 'task-002'], ['task-001']]);
    assert.equal(linesOf(root, 'DISPATCH', 'task-001').length, 2);
    assert.deepEqual([...new Set(linesOf(root, 'DISPATCH').map((l) => l.session))], [1]);
    // The retry's prompt carried the first failure.
    assert.match(read(join(root, '.launchpad/runs/task-001/attempt-1.2/prompt.md')), /\[AGENT_FAIL\] nothing to learn from yet/);
  });

  it('eight loops of `launchpad add` beside the run: the run waits its turn for the state lock and runs every task', async () => {
    const g = gates();
    const root = harness({ tasks: [{ id: 'task-001' }], sessionConfig: { max_tasks_per_session: 200 } });
    const started = startRun(root, `${agentCmd('gate.sh')} ${agentCmd('writes-done.sh')}`, [], { GATE_DIR: g.dir });
    await waitFor('task-001 to start', () => g.waiting('task-001'));
    const loops = Array.from({ length: 8 }, async (_, n) => {
      for (let i = 0; i < 3; i++) {
        const add = await launchpad(root, ['add', `Loop ${n} task ${i}`, '--validate', 'true']);
        assert.equal(add.code, 0, show(add));
      }
    });
    // The added tasks open their own gates: only task-001 waits for the loops to end.
    const opener = setInterval(() => {
      for (let i = 2; i <= 25; i++) g.open(`task-${String(i).padStart(3, '0')}`);
    }, 100);
    try {
      await Promise.all(loops);
    } finally {
      g.open('task-001');
    }
    const r = await started.done;
    clearInterval(opener);
    assert.equal(r.code, 0, show(r, root));
    assert.equal(linesOf(root, 'ERROR').length, 0);
    assert.equal(linesOf(root, 'Completed').length, 25);
  });

  it('a state lock held longer than a command waits for it (12 s): the run waits, then goes on', async function () {
    this.timeout(180_000);
    const root = harness({ tasks: [{ id: 'task-001' }] });
    // A process of its own holds the state lock as a slow command would, until it is released.
    const lockModule = join(__dirname, '..', '..', '..', 'src', 'core', 'lock.js');
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `require(${JSON.stringify(lockModule)}).acquireLock(${JSON.stringify(join(root, '.launchpad', 'state.lock'))}, 'launchpad edit', 1000).then((l) => { console.log('held'); setTimeout(() => { l.release(); process.exit(0); }, 12000); });`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    const r = await startRun(root, agentCmd('writes-done.sh')).done;
    assert.equal(r.code, 0, show(r, root));
    assert.equal(taskById(root, 'task-001').status, 'completed');
    assert.equal(holder.exitCode ?? (await new Promise((resolve) => holder.once('exit', resolve))), 0);
  });
});
