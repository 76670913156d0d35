// Concurrent workers and in-place runs as the Tasks view shows them: a CLI worker in another
// process holds a task (its id and lease on the row and in the hover), a run started in VS Code
// joins as one more worker, and an in-place run commits on the checked-out branch, rolling a
// failed attempt back with its commits kept. The workspace's own task file and log are restored.
import * as assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { STATE_LABELS } from '../../src/vscode/views/taskPresentation';
import {
  CLI,
  eventually,
  git,
  launchpad,
  progressFile,
  readTaskFile,
  shownTask,
  shownTasks,
  tasksFile,
  tooltipText,
  workspaceRoot,
} from './launchpad';
import { task } from './setup';

/** A fixture task with its own validation command. */
const checked = (id: string, title: string, command = `test -f src/${id}/done.txt`, extra: Record<string, unknown> = {}) =>
  task(id, title, [], { validation: { command, timeout_seconds: 60 }, ...extra });

function writeHarness(session_config: Record<string, unknown>, tasks: unknown[]): void {
  fs.writeFileSync(tasksFile(), JSON.stringify({ version: 3, session_config, tasks, session_count: 0 }, null, 2) + '\n');
}

/** Changes in the working tree, but for the journal (Launchpad's own, spared by a rollback). */
const changes = () => git('status', '--porcelain', '--untracked-files=all', '--', '.', ':!.agent-os');

const excludeFile = () => path.join(workspaceRoot(), '.git/info/exclude');

const mergesOf = (id: string) =>
  git('log', '--merges', '--format=%s')
    .split('\n')
    .filter((s) => s.startsWith(`Merge [${id}]`)).length;

describe('concurrent workers and in-place runs in the tasks view', function () {
  this.timeout(180_000);
  let api: LaunchpadApi;
  let savedTasks: string;
  let savedLog: string;
  let savedExclude: string;
  let worker: ChildProcess | undefined;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
    savedLog = fs.readFileSync(progressFile(), 'utf8');
    savedExclude = fs.existsSync(excludeFile()) ? fs.readFileSync(excludeFile(), 'utf8') : '';
  });
  after(async () => {
    worker?.kill('SIGKILL');
    fs.writeFileSync(excludeFile(), savedExclude);
    fs.writeFileSync(tasksFile(), savedTasks);
    fs.writeFileSync(progressFile(), savedLog);
    await api.model.refresh();
  });

  it("a worker's task shows as interrupted once its lease runs out, with no file changing", async () => {
    // A worker that died holding its task: its lease ends a few seconds from now.
    const until = new Date(Date.now() + 4_000).toISOString();
    writeHarness({ concurrency_mode: 'concurrent', lease_seconds: 30 }, [
      checked('lease-1', 'Held by a gone worker', undefined, {
        status: 'in_progress',
        attempts: 1,
        claimed_by: 'gone-worker',
        lease_expires_at: until,
        agent_id: 'agent_gone',
        worktree_branch: 'harness-lease-1',
        started_at_commit: git('rev-parse', 'HEAD').trim(),
      }),
    ]);
    await api.model.refresh();
    assert.equal((await shownTask(api, 'lease-1')).group, STATE_LABELS.running, 'a current lease holds its task');
    const written = fs.statSync(tasksFile()).mtimeMs;
    // The view as it is, with no refresh asked for (shownTask would ask).
    const groupShown = async () =>
      (await shownTasks(api)).find((g) => g.children.some((c) => c.node.kind === 'task' && c.node.taskId === 'lease-1'))?.label;
    await eventually(
      'lease-1 shown as interrupted after its lease ended',
      async () => (await groupShown()) === STATE_LABELS.interrupted,
      30_000,
    );
    assert.ok(Date.now() >= Date.parse(until), 'shown as interrupted before its lease ended');
    assert.equal(fs.statSync(tasksFile()).mtimeMs, written, 'the task file changed');
  });

  it('shows the worker holding each task and its lease; a run in VS Code joins as one more worker', async () => {
    const ids = ['cw-1', 'cw-2', 'cw-3', 'cw-4'];
    writeHarness(
      { concurrency_mode: 'concurrent', lease_seconds: 30, max_parallel_agents: 1, retry_backoff_seconds: 0 },
      ids.map((id) => checked(id, `Concurrent ${id}`)),
    );
    // A worker in another process (as a terminal or another machine would start it), whose agent
    // holds its task until VS Code's worker has taken one of its own.
    const release = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lp-workers-')), 'release');
    const agent = `for i in $(seq 600); do [ -f '${release}' ] && break; sleep 0.1; done; sh '${path.join(workspaceRoot(), 'tools/agent.sh')}'`;
    worker = spawn(process.execPath, [CLI, 'run', '--agent', agent, '--dir', workspaceRoot()], {
      // LAUNCHPAD_TRUST: this workspace's commands are the test's own, approved as a person would.
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', LAUNCHPAD_TRUST: '1', HARNESS_WORKER_ID: 'cli-worker' },
      stdio: 'ignore',
    });
    const workerDone = new Promise<number | null>((r) => worker!.on('close', r));

    const held = await eventually('a task claimed by the CLI worker', () =>
      readTaskFile().tasks.find((t) => t.status === 'in_progress' && t.claimed_by === 'cli-worker'),
    );
    const lease = String(held.lease_expires_at);
    const shown = await eventually(`${held.id} shown as held by cli-worker`, async () => {
      const r = await shownTask(api, held.id);
      return r.group === STATE_LABELS.running && String(r.item.description).includes('cli-worker until ') ? r : undefined;
    });
    assert.match(String(shown.item.description), /cli-worker until \d\d:\d\d:\d\d/);
    assert.match(tooltipText(shown.item), new RegExp(`Claimed by:\\W+cli-worker, lease until ${lease.slice(0, 11)}`));

    // The window follows the CLI worker's run; Run still starts one of its own, which joins as
    // a worker: it must leave the CLI worker's live claim alone and take the rest.
    await eventually("the CLI worker's run followed", () => api.runs.all.some((r) => r.pid === worker!.pid && !r.startedHere));
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.own;
    assert.ok(run, 'launchpad.run started a run of its own beside the followed one');
    const dispatchedBy = (pattern: RegExp) =>
      fs
        .readFileSync(progressFile(), 'utf8')
        .split('\n')
        .filter((l) => / DISPATCH \[cw-/.test(l) && pattern.test(l));
    // A hang detector, not a budget: a loaded machine takes a while to start a run and dispatch.
    await eventually('a task dispatched by the VS Code worker', () => dispatchedBy(/worker=(?!cli-worker )/).length > 0, 120_000).catch(
      (err) => {
        throw new Error(`${err.message}\n${fs.readFileSync(progressFile(), 'utf8').split('\n').slice(-15).join('\n')}`);
      },
    );
    assert.equal(readTaskFile().tasks.find((t) => t.id === held.id)?.claimed_by, 'cli-worker', `${held.id} still held by its worker`);
    fs.writeFileSync(release, '');
    const outcome = await run.done;
    assert.equal(await workerDone, 0, 'the CLI worker ended cleanly');
    assert.ok(outcome, 'the VS Code run ended');

    const file = readTaskFile();
    for (const id of ids) {
      assert.equal(file.tasks.find((t) => t.id === id)?.status, 'completed', `${id} completed`);
      assert.equal(mergesOf(id), 1, `${id} merged exactly once`);
    }
    const dispatches = fs
      .readFileSync(progressFile(), 'utf8')
      .split('\n')
      .filter((l) => / DISPATCH \[cw-/.test(l));
    const workers = new Set(dispatches.map((l) => /worker=(\S+)/.exec(l)?.[1]));
    assert.ok(workers.has('cli-worker'), 'the CLI worker dispatched tasks');
    const vscodeLines = fs
      .readFileSync(progressFile(), 'utf8')
      .split('\n')
      .filter((l) => !l.includes('cli-worker'))
      .slice(-12)
      .join('\n');
    assert.equal(workers.size, 2, `two workers dispatched: ${[...workers].join(', ')}; outcome ${JSON.stringify(outcome)}\n${vscodeLines}`);
    assert.equal(dispatches.length, ids.length, 'each task dispatched once: no live claim taken from the other worker');
    const done = await shownTask(api, held.id);
    assert.equal(done.group, STATE_LABELS.completed);
    assert.ok(!String(done.item.description).includes('cli-worker'), 'a completed task shows no claim');
  });

  it('shows an in-place run: committed on the branch without a merge, a failed attempt rolled back with its commits kept', async () => {
    writeHarness({ isolation: 'in-place', max_parallel_agents: 1, retry_backoff_seconds: 0 }, [
      checked('ip-1', 'In place that passes'),
      // The agent commits done.txt, but the validation looks for another file.
      checked('ip-2', 'In place that fails validation', 'test -f src/ip-2/missing.txt', { max_attempts: 1 }),
    ]);
    // What earlier tests left untracked is ignored from here on; a person's new untracked file
    // makes an in-place run refuse to start rather than commit it or clean it away.
    const ignore = () =>
      fs.appendFileSync(
        excludeFile(),
        changes()
          .split('\n')
          .filter(Boolean)
          .map((l) => `/${l.slice(3)}\n`)
          .join(''),
      );
    ignore();
    const notes = path.join(workspaceRoot(), 'person-notes.txt');
    fs.writeFileSync(notes, 'mine\n');
    const before = git('rev-parse', 'HEAD').trim();
    await vscode.commands.executeCommand(COMMANDS.run);
    assert.ok(api.runs.own, 'launchpad.run started a run');
    await assert.rejects(api.runs.own.done, /no untracked files but Launchpad's own: person-notes\.txt;/);
    assert.equal(fs.readFileSync(notes, 'utf8'), 'mine\n');
    assert.equal(git('rev-parse', 'HEAD').trim(), before, 'nothing committed');
    ignore();
    assert.equal(changes(), '', 'the workspace is clean before an in-place run');
    const base = git('rev-parse', 'HEAD').trim();
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.own;
    assert.ok(run, 'launchpad.run started a run');
    await run.done;

    const log = fs.readFileSync(progressFile(), 'utf8');
    const completed = /Completed \[ip-1\] \(commit ([0-9a-f]+)\)/.exec(log);
    assert.ok(completed, 'ip-1 completed with its commit');
    assert.equal(mergesOf('ip-1'), 0, 'no merge commit in place');
    assert.ok(git('rev-parse', 'HEAD').trim().startsWith(completed[1]!), 'HEAD is the commit the log names');
    assert.ok(git('merge-base', '--is-ancestor', base, 'HEAD') === '', 'on top of the base');
    assert.match(log, /ROLLBACK \[ip-2\] git reset --hard [0-9a-f]+/);
    assert.equal(changes(), '', 'no untracked files after the rollback');
    assert.ok(!fs.existsSync(path.join(workspaceRoot(), 'src/ip-2')), 'the failed attempt is gone from the working tree');
    const kept = git('for-each-ref', '--format=%(refname)', 'refs/launchpad/attempts/ip-2/').trim();
    assert.ok(kept, 'the failed attempt is kept under a Launchpad ref');
    assert.match(git('log', '-1', '--format=%s', kept.split('\n')[0]!), /\[ip-2\]/);

    const passed = await shownTask(api, 'ip-1');
    assert.equal(passed.group, STATE_LABELS.completed);
    const failed = await eventually('ip-2 failed, its kept attempt in the hover', async () => {
      const r = await shownTask(api, 'ip-2');
      assert.equal(r.group, STATE_LABELS.failed);
      assert.match(tooltipText(r.item), /Kept attempts:\W+.*ip-2/);
      return r;
    });
    assert.match(tooltipText(failed.item), /\[TEST_FAIL\] test -f src\/ip-2\/missing.txt exited with 1/);
  });
});
