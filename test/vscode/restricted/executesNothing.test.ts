import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { statusUri } from '../../../src/vscode/commands/statusDocument';
import { COMMANDS } from '../../../src/vscode/contributions';
import { requestScreen, waitFor } from '../host';
import { cli, eventually, git, launchpad, shownTasks, workspaceRoot } from '../launchpad';

/** Every file of the workspace (git's own folder aside) with its bytes. */
function snapshotFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(root, p), fs.readFileSync(p, 'latin1'));
    }
  };
  walk(root);
  return out;
}

describe('restricted mode executes nothing', function () {
  this.timeout(60_000);

  it('shows the tasks', async () => {
    assert.equal(vscode.workspace.isTrusted, false);
    const api = await launchpad();
    await api.model.whenLoaded();
    const groups = await shownTasks(api);
    const ids = groups.flatMap((g) => g.children.map((c) => (c.node.kind === 'task' ? c.node.taskId : '')));
    for (const id of ['task-001', 'task-002', 'task-003', 'task-004', 'task-005']) assert.ok(ids.includes(id), `${id} shown`);
    // Listing worktrees runs git: not in Restricted Mode.
    assert.deepEqual(await api.views.worktrees.getChildren(), []);
    await vscode.commands.executeCommand('workbench.view.extension.launchpad');
    // Status reloads the model: with nothing changed, the view must not be refreshed under the
    // rows it is showing (a refresh racing VS Code's first requests left the groups empty).
    let refreshed = 0;
    const counting = api.views.tasks.onDidChangeTreeData(() => refreshed++);
    try {
      await vscode.commands.executeCommand(COMMANDS.status);
      await api.model.refresh();
    } finally {
      counting.dispose();
    }
    assert.equal(refreshed, 0, 'a reload that changed nothing refreshed the Tasks view');
    assert.match(
      (await vscode.workspace.openTextDocument(statusUri())).getText(),
      /\| task-004 \| Render the index page \| Waiting on dependencies \|/,
    );
    // The status opens as a Markdown preview, which activates VS Code's Markdown extension.
    await waitFor(
      'the Markdown extension to activate',
      () => vscode.extensions.getExtension('vscode.markdown-language-features')?.isActive === true,
      30_000,
    );
    await api.views.revealTask('task-005');
    await new Promise((r) => setTimeout(r, 3000)); // the preview paints, for a person looking at the screenshot
    // What a person sees: every task's row (read-only), and, once the extensions the preview
    // needs have started, no "Activating Extensions…" left in the status bar.
    let screen = await requestScreen('restricted-sidebar');
    for (const end = Date.now() + 30_000; screen && /Activating Extensions/.test(screen.text.statusbar) && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 500));
      screen = await requestScreen('restricted-sidebar');
    }
    if (screen) {
      for (const id of ['task-001', 'task-002', 'task-003', 'task-004', 'task-005'])
        assert.ok(screen.text.sidebar.includes(id), `${id} shown in:\n${screen.text.sidebar}`);
      assert.doesNotMatch(screen.text.statusbar, /Activating Extensions/);
    }
  });

  it('runs, adds, retries, initializes, starts no long run and decides no milestone when the commands are invoked directly', async () => {
    const api = await launchpad();
    const root = workspaceRoot();
    // A long run for the Milestones commands to refuse: made by the test with the CLI, as a
    // person would in a terminal, before the snapshot.
    await cli('milestones', 'init', 'Restricted session', '--planner', 'touch planned', '--verify', 'true');
    const dir = path.join(root, 'docs/engineering-discipline/harness/restricted-session');
    fs.writeFileSync(
      path.join(dir, 'milestones', 'M1-part.md'),
      '# M1: Part M1\n\n## Goal\nPart M1.\n\n## Scope\n- src/m1/\n\n## Success Criteria\n- src/m1/t1.txt exists\n\n## Dependencies\n- (none)\n',
    );
    await eventually('the long run in the Milestones model', async () => (await api.milestones.model.refresh()).length === 1);
    const before = snapshotFiles(root);
    const worktreesBefore = git('worktree', 'list', '--porcelain');
    const headBefore = git('rev-parse', 'HEAD');

    await vscode.commands.executeCommand(COMMANDS.run);
    await vscode.commands.executeCommand(COMMANDS.addTask, { title: 'Sneaky', validate: 'true' });
    await vscode.commands.executeCommand(COMMANDS.retryTask, 'task-003');
    await vscode.commands.executeCommand(COMMANDS.taskClicked, 'task-003');
    await vscode.commands.executeCommand(COMMANDS.init, { gitignore: true });
    await vscode.commands.executeCommand(COMMANDS.removeWorktree, 'task-001');
    await vscode.commands.executeCommand(COMMANDS.compareWorktree, 'task-001');
    await vscode.commands.executeCommand(COMMANDS.clearWorktreePool);
    await vscode.commands.executeCommand(COMMANDS.installHooks, { agents: ['claude', 'cursor'] });
    await vscode.commands.executeCommand(COMMANDS.startSession, { spec: null, tasks: ['task-001'], confirm: true });
    const m1 = { dir, id: 'M1' };
    await vscode.commands.executeCommand(COMMANDS.runLongRun, { dir });
    await vscode.commands.executeCommand(COMMANDS.reviewPlan, m1, { decision: 'approve' });
    await vscode.commands.executeCommand(COMMANDS.approveMilestone, m1, {});
    await vscode.commands.executeCommand(COMMANDS.rejectPlan, m1, { reason: 'sneaky' });
    await vscode.commands.executeCommand(COMMANDS.skipMilestone, m1, { reason: 'sneaky' });
    await vscode.commands.executeCommand(COMMANDS.retryMilestone, m1);
    await new Promise((r) => setTimeout(r, 1500)); // anything started would have written by now

    assert.equal(api.runs.active, undefined, 'no run');
    assert.equal(api.milestones.longRuns.active, undefined, 'no long run');
    assert.deepEqual([...snapshotFiles(root).keys()].sort(), [...before.keys()].sort(), 'no file created or removed');
    for (const [file, bytes] of before) assert.equal(snapshotFiles(root).get(file), bytes, `${file} unchanged`);
    assert.ok(!fs.existsSync(path.join(root, '.launchpad')), 'no lock or artefact folder');
    assert.equal(git('worktree', 'list', '--porcelain'), worktreesBefore, 'no worktree');
    assert.equal(git('rev-parse', 'HEAD'), headBefore, 'no commit');
  });
});
