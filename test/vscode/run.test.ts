import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import type { RunOutcome } from '../../src/core/controller/types';
import { processIdentity } from '../../src/core/processIdentity';
import { statusUri } from '../../src/vscode/commands/statusDocument';
import { COMMANDS, SETTINGS, TASK_TYPE } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { STATE_LABELS } from '../../src/vscode/views/taskPresentation';
import { requestScreenshot } from './host';
import {
  answeringPicks,
  cli,
  editTaskFile,
  eventually,
  git,
  launchpad,
  progressFile,
  readTaskFile,
  shownTask,
  tooltipText,
  workspaceRoot,
} from './launchpad';

/** Runs like a person: the command, then waits for the run it started. */
async function runAndWait(api: LaunchpadApi): Promise<RunOutcome> {
  await vscode.commands.executeCommand(COMMANDS.run);
  const run = api.runs.active;
  assert.ok(run, 'launchpad.run started a run');
  return run.done;
}

describe('run', function () {
  this.timeout(120_000);
  let api: LaunchpadApi;
  const started: vscode.Task[] = [];
  let listener: vscode.Disposable;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    listener = vscode.tasks.onDidStartTask((e) => started.push(e.execution.task));
  });
  after(() => listener.dispose());

  it('refuses to start while another session holds the lock, and starts nothing', async () => {
    const lock = path.join(workspaceRoot(), '.launchpad/session.lock');
    fs.mkdirSync(lock, { recursive: true });
    // A live holder: this very process, with its identity, as the core records one.
    const holder = {
      pid: process.pid,
      identity: processIdentity(process.pid),
      host: os.hostname(),
      command: 'launchpad run',
      acquired_at: new Date().toISOString(),
    };
    fs.writeFileSync(path.join(lock, 'holder.json'), JSON.stringify(holder));
    try {
      await vscode.commands.executeCommand(COMMANDS.run);
      assert.equal(api.runs.active, undefined);
      assert.equal(readTaskFile().tasks.find((t) => t.id === 'task-001')?.status, 'pending');
    } finally {
      fs.rmSync(path.join(workspaceRoot(), '.launchpad'), { recursive: true, force: true });
    }
  });

  it('refuses to start without an agent command', async () => {
    const config = vscode.workspace.getConfiguration();
    const agent = config.get<string>(SETTINGS.agentCommand);
    await config.update(SETTINGS.agentCommand, '', vscode.ConfigurationTarget.Workspace);
    try {
      // Run asks which agent (run/agentPick.ts); Esc there starts nothing.
      await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.run), 'esc');
      assert.equal(api.runs.active, undefined);
    } finally {
      await config.update(SETTINGS.agentCommand, agent, vscode.ConfigurationTarget.Workspace);
    }
    assert.equal(vscode.workspace.getConfiguration().get(SETTINGS.agentCommand), agent);
  });

  it('runs the tasks with the scripted agent and merges what passes', async () => {
    const outcome = await runAndWait(api);
    // task-003 fails on purpose, task-004 depends on it, task-005 has no validation command.
    assert.equal(outcome.exitCode, 1, outcome.message);
    const file = readTaskFile();
    const status = (id: string) => file.tasks.find((t) => t.id === id)?.status;
    assert.equal(status('task-001'), 'completed');
    assert.equal(status('task-002'), 'completed');
    assert.equal(status('task-003'), 'failed');
    const merges = git('log', '--merges', '--format=%s', 'main');
    assert.match(merges, /^Merge \[task-001\] Add slugify\(\)$/m);
    assert.match(merges, /^Merge \[task-002\] Use slugify in page titles$/m);
    assert.ok(fs.existsSync(path.join(workspaceRoot(), 'src/task-002/done.txt')));
    assert.equal(api.runs.active, undefined);
  });

  it("told the person: the run's end with its counts, and the task that used all its attempts, with buttons that work", async () => {
    const notices = api.notices();
    const ended = notices.filter((n) => n.message.startsWith('Launchpad: stopped: nothing left that can run')).at(-1);
    assert.ok(ended, notices.map((n) => n.message).join('\n'));
    assert.equal(ended.severity, 'warning');
    assert.match(ended.message, /\(2\/5 completed · 1 failed · 1 blocked · 1 without validation\)$/);
    assert.deepEqual(Object.keys(ended.actions), ['Show Failures', 'Open Log']);
    const exhausted = notices.find((n) => n.message.includes('(task-003)'));
    assert.ok(exhausted, notices.map((n) => n.message).join('\n'));
    assert.equal(
      exhausted.message,
      'Launchpad: "Parse front matter [fail]" failed its only attempt (task-003): [AGENT_FAIL] could not parse the front matter fixture',
    );
    assert.deepEqual(Object.keys(exhausted.actions), ['Retry', 'Show Error']);
    assert.ok(notices.indexOf(exhausted) < notices.indexOf(ended), 'told as it happened, before the end');

    // Show Failures: this session's ERROR lines, task-003's among them.
    await ended.actions['Show Failures']!();
    const failures = await eventually('the filtered log of the failures', () => {
      const doc = vscode.window.activeTextEditor?.document;
      return doc?.uri.scheme === 'launchpad-log' && /ERROR \[task-003\]/.test(doc.getText()) ? doc : undefined;
    });
    assert.match(failures.getText(), /ERROR \[task-003\] \[AGENT_FAIL\] could not parse the front matter fixture/);
    assert.doesNotMatch(failures.getText(), / (DISPATCH|MERGE|VALIDATE) /);
    // Show Error: the task's last line in the progress log.
    await exhausted.actions['Show Error']!();
    const log = await eventually('the progress log', () =>
      vscode.window.activeTextEditor?.document.uri.fsPath === progressFile() ? vscode.window.activeTextEditor : undefined,
    );
    assert.match(log.document.lineAt(log.selection.active.line).text, /ERROR \[task-003\] \[AGENT_FAIL\]/);
    // Retry runs a command that exists (clicking it is tested below, through the Tasks view).
    assert.ok((await vscode.commands.getCommands(true)).includes(COMMANDS.retryTask));
  });

  it('ran each task in one VS Code task and terminal of its own, named after it', async () => {
    // Task events reach the extension host a little after the fact.
    const ours = await eventually('a started VS Code task for each dispatched task', () => {
      const list = started.filter((t) => t.definition.type === TASK_TYPE);
      const ids = new Set(list.map((t) => t.definition.taskId as string));
      return ['task-001', 'task-002', 'task-003'].every((id) => ids.has(id)) ? list : undefined;
    });
    for (const id of ['task-001', 'task-002', 'task-003'])
      assert.equal(ours.filter((t) => t.definition.taskId === id).length, 1, `one task for ${id}`);
    assert.ok(ours.some((t) => t.name === 'Add slugify() · task-001'));
    const names = vscode.window.terminals.map((t) => t.name);
    const expected = ['Add slugify() · task-001', 'Use slugify in page titles · task-002', 'Parse front matter [fail] · task-003'];
    for (const name of expected) assert.ok(names.includes(name), `a terminal "${name}" in ${names.join(' | ')}`);
    // The terminal list beside the panel shows a name's first characters: they tell these apart.
    assert.equal(new Set(expected.map((n) => n.slice(0, 7))).size, expected.length);
  });

  it('shows the outcome in the sidebar (screenshot sidebar-after-run)', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.launchpad');
    await vscode.commands.executeCommand('launchpad.tasks.focus');
    const uri = await vscode.commands.executeCommand<vscode.Uri>(COMMANDS.status);
    assert.equal(uri?.toString(), statusUri().toString());
    // Rendered: the active tab is VS Code's Markdown preview (of the status document).
    await eventually('the status preview', () => {
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      return input instanceof vscode.TabInputWebview && input.viewType.includes('markdown.preview');
    });
    const status = await vscode.workspace.openTextDocument(statusUri());
    assert.match(status.getText(), /\| task-003 \| Parse front matter \[fail\] \| Failed \(attempts exhausted\) \| 1\/1 \| \[AGENT_FAIL\]/);
    // It follows the files: an edit shows without running Status again.
    const retitle = (title: string) => editTaskFile((f) => void (f.tasks.find((t) => t.id === 'task-005')!.title = title));
    retitle('Write the docs (edited)');
    try {
      await eventually('the edit in the status', () => status.getText().includes('| task-005 | Write the docs (edited) |'));
    } finally {
      retitle('Write the docs');
    }
    await eventually('the title back in the status', () => status.getText().includes('| task-005 | Write the docs |'));
    await api.views.revealTask('task-003');
    await new Promise((r) => setTimeout(r, 3000)); // the preview paints, for a person looking at the screenshot
    await requestScreenshot('sidebar-after-run');
  });

  it('lists the run and each validation command in "Tasks: Run Task"', async () => {
    const listed = await vscode.tasks.fetchTasks({ type: TASK_TYPE });
    const byName = new Map(listed.map((t) => [t.name, t]));
    assert.deepEqual(
      listed.map((t) => t.name),
      [
        'Run',
        'validate task-001 · Add slugify()',
        'validate task-002 · Use slugify in page titles',
        'validate task-003 · Parse front matter [fail]',
        'validate task-004 · Render the index page',
      ],
      'the run, then one per task with a validation command (task-005 has none)',
    );
    for (const t of listed) assert.equal(t.source, 'Launchpad');
    assert.deepEqual(byName.get('Run')!.definition, { type: TASK_TYPE, action: 'run' });
    assert.deepEqual(byName.get('validate task-001 · Add slugify()')!.definition, {
      type: TASK_TYPE,
      action: 'validate',
      taskId: 'task-001',
    });
    // A validation runs in the repository as it is: task-001's work is merged, task-003's is not.
    const exitOf = async (name: string) => {
      const ended = new Promise<number | undefined>((resolve) => {
        const sub = vscode.tasks.onDidEndTaskProcess((e) => {
          if (e.execution.task.name !== name) return;
          sub.dispose();
          resolve(e.exitCode);
        });
      });
      await vscode.tasks.executeTask(byName.get(name)!);
      return ended;
    };
    assert.equal(await exitOf('validate task-001 · Add slugify()'), 0);
    assert.equal(await exitOf('validate task-003 · Parse front matter [fail]'), 1);
  });

  it('hovers a failed task with its error log, output tail and validation command', async () => {
    const t3 = await shownTask(api, 'task-003');
    assert.equal(t3.group, STATE_LABELS.failed);
    assert.match(String(t3.item.contextValue), /^task:failed:transcript$/);
    const tip = tooltipText(t3.item);
    assert.match(tip, /\[AGENT_FAIL\] could not parse the front matter fixture/);
    assert.match(tip, /expected '---' at line 1/);
    assert.match(tip, /test -f src\/task-003\/done\.txt/);
    const t4 = await shownTask(api, 'task-004');
    assert.equal(t4.group, STATE_LABELS.blocked);
    assert.match(tooltipText(t4.item), /Blocked by failed task-003/);
  });

  it('shows the transcript and the last log line of a task', async () => {
    await vscode.commands.executeCommand(COMMANDS.showTranscript, 'task-003');
    const transcript = vscode.window.activeTextEditor?.document;
    assert.match(transcript?.uri.fsPath ?? '', /task-003[\\/]attempt-1[\\/]transcript\.log$/);
    assert.match(transcript!.getText(), /RESULT:FAIL could not parse/);

    await vscode.commands.executeCommand(COMMANDS.revealInLog, 'task-003');
    const editor = await eventually('the progress log', () =>
      vscode.window.activeTextEditor?.document.uri.fsPath === progressFile() ? vscode.window.activeTextEditor : undefined,
    );
    const line = editor.document.lineAt(editor.selection.active.line).text;
    assert.match(line, /\] [A-Za-z_]+ \[task-003\]/);
    const lastMention = editor.document
      .getText()
      .split('\n')
      .filter((l) => / \[task-003\]/.test(l))
      .at(-1);
    assert.equal(line, lastMention);
  });

  it("retries a failed task from its row's Retry button", async () => {
    // Give task-003 attempts left, so Retry Task retries it without asking.
    editTaskFile((f) => {
      const t = f.tasks.find((x) => x.id === 'task-003')!;
      t.max_attempts = 3;
    });
    await eventually('task-003 retryable', () => api.model.snapshot?.byId.get('task-003')?.state === 'retryable', 10_000);
    // The inline button passes the row's node.
    await vscode.commands.executeCommand(COMMANDS.retryTask, (await shownTask(api, 'task-003')).node);
    const file = readTaskFile();
    assert.equal(file.tasks.find((t) => t.id === 'task-003')?.status, 'pending');
    assert.equal(file.tasks.find((t) => t.id === 'task-003')?.attempts, 0);
    assert.equal(file.tasks.find((t) => t.id === 'task-004')?.status, 'pending', 'its dependent is unblocked');
    await eventually('task-003 ready in the view', async () => (await shownTask(api, 'task-003')).group === STATE_LABELS.ready);
    assert.match(fs.readFileSync(progressFile(), 'utf8'), /RECOVERY \[task-003\] action="retry" reason="requested by user"/);
  });

  it('lists a task worktree and compares it with its base', async () => {
    const wt = path.join(path.dirname(workspaceRoot()), 'manual-task-005');
    git('worktree', 'add', '-q', '-b', 'harness-task-005', wt, 'main');
    try {
      fs.writeFileSync(path.join(wt, 'docs.md'), '# docs\n');
      const node = await eventually('the worktree in the Worktrees view', async () => {
        await api.model.refresh();
        return (await api.views.worktrees.getChildren()).find((n) => n.kind === 'worktree' && n.taskId === 'task-005');
      });
      const item = api.views.worktrees.getTreeItem(node);
      assert.equal(item.contextValue, 'worktree:needs_validation');
      assert.match(String(item.description), /needs a validation command · harness-task-005/);
      assert.match(String((await shownTask(api, 'task-005')).item.contextValue), /:worktree/);
      await vscode.commands.executeCommand(COMMANDS.compareWorktree, node);
      await eventually('the comparison', () => /task-005: worktree vs/.test(vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? ''));
    } finally {
      git('worktree', 'remove', '--force', wt);
      git('branch', '-D', 'harness-task-005');
    }
  });

  it("follows each agent's transcript in its terminal; closing it leaves the agent running; Stop Task ends it, recorded as failed", async function () {
    this.timeout(240_000);
    const id = (await cli('add', 'Wait for a review [slow]', '--validate', 'true', '--files', 'src/slow1/', '--max-attempts', '1')).trim();
    const startedBefore = started.length;
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active!;
    // Named while it runs: the title first (the terminal list shows the first characters), then the id.
    const name = `Wait for a review [slow] · ${id}`;
    const terminal = await eventually(`the terminal of ${id}`, () => vscode.window.terminals.find((t) => t.name === name));
    await eventually(`${id} running`, () => readTaskFile().tasks.find((t) => t.id === id)?.status === 'in_progress');
    const transcript = path.join(workspaceRoot(), `.launchpad/runs/${id}/attempt-1/transcript.log`);
    await eventually("the agent's first lines in its transcript", () =>
      fs.readFileSync(transcript, 'utf8').includes('waiting for a review'),
    );
    const agentId = String(readTaskFile().tasks.find((t) => t.id === id)?.agent_id);
    const linesBefore = fs.readFileSync(transcript, 'utf8').split('\n').length;
    terminal.dispose();
    // The agent writes a line a second: two more after the close show it was not stopped.
    await eventually(
      'the agent to go on writing after its terminal closed',
      () => fs.readFileSync(transcript, 'utf8').split('\n').length >= linesBefore + 2,
    );
    assert.equal(readTaskFile().tasks.find((t) => t.id === id)?.status, 'in_progress', 'closing the terminal stopped nothing');
    assert.doesNotMatch(fs.readFileSync(progressFile(), 'utf8'), new RegExp(`AGENT_DONE \\[${id}\\]`));

    // Stop Task from the task's row, as a person clicks it.
    const stoppedAt = Date.now();
    const answer = await vscode.commands.executeCommand(COMMANDS.stopTask, (await shownTask(api, id)).node);
    assert.equal(answer, 'stopped');
    await run.done;
    assert.ok(Date.now() - stoppedAt < 60_000, 'the run did not wait for the agent to finish on its own');
    const t = readTaskFile().tasks.find((x) => x.id === id)!;
    assert.equal(t.status, 'failed');
    assert.equal(String((t.error_log as string[]).at(-1)), '[AGENT_FAIL] stopped by a person (launchpad stop)');
    assert.match(fs.readFileSync(progressFile(), 'utf8'), new RegExp(`WARN \\[${id}\\] agent=${agentId} stopped by a person`));
    // Meanwhile task-003 (retried above, 3 attempts) failed three times in a row in this run: each
    // attempt got its terminal, the same one, although VS Code refuses a task that is still active.
    const t3 = readTaskFile().tasks.find((x) => x.id === 'task-003')!;
    assert.equal(t3.attempts, 3);
    const ofTask3 = () => started.slice(startedBefore).filter((x) => x.definition.taskId === 'task-003').length;
    // Each waits for the previous one's terminal to end: on a loaded machine that takes a while.
    await eventually('three VS Code tasks for task-003', () => ofTask3() === 3, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}: ${ofTask3()} started, terminals ${vscode.window.terminals.map((x) => x.name).join(' | ')}`);
    });
  });

  it('asks before retrying a task whose attempts are used up, in a quick pick; "Run" in Run Task then takes it', async () => {
    // task-003 failed three times in the run above: its attempts are used up.
    assert.equal(api.model.snapshot?.byId.get('task-003')?.state, 'failed');
    // Retry Task, as the row's button runs it.
    const clickIt = () => vscode.commands.executeCommand(COMMANDS.retryTask, 'task-003');
    // Esc: nothing changes.
    await answeringPicks(clickIt, 'esc');
    assert.equal(readTaskFile().tasks.find((t) => t.id === 'task-003')?.status, 'failed');
    // Enter on the first item, "Retry": a fresh budget.
    await answeringPicks(clickIt);
    let t3 = readTaskFile().tasks.find((t) => t.id === 'task-003')!;
    assert.deepEqual([t3.status, t3.attempts], ['pending', 0]);
    const retried = fs.readFileSync(progressFile(), 'utf8').length;

    // The run from "Tasks: Run Task": the same run, in a terminal of its own.
    const runTask = (await vscode.tasks.fetchTasks({ type: TASK_TYPE })).find((t) => t.definition.action === 'run')!;
    const ended = new Promise<number | undefined>((resolve) => {
      const sub = vscode.tasks.onDidEndTaskProcess((e) => {
        if (e.execution.task.definition.action !== 'run') return;
        sub.dispose();
        resolve(e.exitCode);
      });
    });
    await vscode.tasks.executeTask(runTask);
    const run = await eventually('the run started by the task', () => api.runs.active);
    const outcome = await run.done;
    t3 = readTaskFile().tasks.find((t) => t.id === 'task-003')!;
    assert.ok((t3.attempts as number) >= 1, 'the run took task-003 again');
    assert.match(fs.readFileSync(progressFile(), 'utf8').slice(retried), /DISPATCH \[task-003\]/);
    assert.equal(await ended, outcome.exitCode, "the terminal ends with the run's exit code");
  });

  it('stops: agents end, their task stays in progress, the lock is released', async () => {
    const id = (await cli('add', 'Another review [slow]', '--validate', 'true', '--files', 'src/slow2/')).trim();
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active!;
    await eventually(`${id} running`, () => readTaskFile().tasks.find((t) => t.id === id)?.status === 'in_progress');
    const transcript = path.join(workspaceRoot(), `.launchpad/runs/${id}/attempt-1/transcript.log`);
    await eventually(
      `${id}'s agent to start`,
      () => fs.existsSync(transcript) && fs.readFileSync(transcript, 'utf8').includes('waiting for a review'),
    );
    await vscode.commands.executeCommand(COMMANDS.stop);
    const outcome = await run.done;
    assert.equal(outcome.reason, 'stopped');
    assert.equal(readTaskFile().tasks.find((t) => t.id === id)?.status, 'in_progress');
    assert.ok(!fs.existsSync(path.join(workspaceRoot(), '.launchpad/session.lock')), 'lock released');
    assert.match(fs.readFileSync(progressFile(), 'utf8'), /STATS .*in_batch=[1-9]/);
  });
});
