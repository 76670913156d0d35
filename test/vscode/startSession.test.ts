import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { OVERRIDE_NOTE } from '../../src/core/journal/scopeGate';
import type { StartSessionResult } from '../../src/vscode/commands/startSession';
import { sessionUri } from '../../src/vscode/commands/startSession';
import { COMMANDS } from '../../src/vscode/contributions';
import { requestScreenshot } from './host';
import { eventually, launchpad, readTaskFile, tasksFile, workspaceRoot } from './launchpad';

const journalFile = () => path.join(workspaceRoot(), '.agent-os/progress/progress.json');
const entries = (): Array<Record<string, unknown>> =>
  fs.existsSync(journalFile()) ? JSON.parse(fs.readFileSync(journalFile(), 'utf8')).entries : [];

/** Runs the command and accepts whatever quick pick it shows (the first, or the pre-picked, item) until it ends. */
async function acceptingEachPick(arg: unknown): Promise<StartSessionResult | undefined> {
  let settled = false;
  let result: StartSessionResult | undefined;
  const running = Promise.resolve(vscode.commands.executeCommand<StartSessionResult | undefined>(COMMANDS.startSession, arg)).then((r) => {
    settled = true;
    result = r;
  });
  await eventually(
    'Start Session to finish',
    async () => {
      if (!settled) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      await new Promise((r) => setTimeout(r, 300));
      return settled;
    },
    60_000,
  );
  await running;
  return result;
}

/** The session document once it shows `ready` (its provider's change reaches the open document asynchronously). */
async function shownText(ready: RegExp): Promise<string> {
  return eventually(`the session summary to show ${ready}`, async () => {
    const text = (await vscode.workspace.openTextDocument(sessionUri())).getText();
    return ready.test(text) ? text : undefined;
  });
}

describe('Launchpad: Start Session', function () {
  this.timeout(120_000);
  let tasksBefore: string;

  before(async () => {
    const api = await launchpad();
    await api.model.whenLoaded();
    tasksBefore = fs.readFileSync(tasksFile(), 'utf8');
  });
  after(async () => {
    // The spec's subtasks were imported into the shared workspace's harness-tasks.json: put it back.
    fs.writeFileSync(tasksFile(), tasksBefore);
    fs.rmSync(path.join(workspaceRoot(), '.agent-os'), { recursive: true, force: true });
    await (await launchpad()).model.refresh();
  });

  it('shows the six steps as a Markdown preview and, on "Yes", logs session_started', async () => {
    const before = entries().length;
    const result = await acceptingEachPick({ spec: null });
    assert.ok(result, 'the command returned its result');
    const text = await shownText(/^\*\*Ready to work on Task/m);
    for (const heading of [
      /^## 1\. Directory verification: OK$/m,
      /^## 2\. Progress context \(last \d+ journal entries\): (OK|WARNING)$/m,
      /^## 3\. Git state \(branch main\): (OK|WARNING)$/m,
      /^## 4\. Task status: (OK|WARNING)$/m,
      /^## 5\. Environment health: SKIPPED$/m,
      /^## 6\. Focus$/m,
    ]) {
      assert.match(text, heading);
    }
    assert.match(text, /^\*\*Ready to work on Task task-\d{3}: .*\?\*\*$/m);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs.map((t) => t.label));
    assert.ok(
      tabs.some((l) => l.includes('Launchpad Session Start-up')),
      `the summary is shown: ${tabs.join(', ')}`,
    );
    await new Promise((r) => setTimeout(r, 1500)); // the preview renders
    await new Promise((r) => setTimeout(r, 1500)); // time for the preview to render, for a person looking at the screenshot
    await requestScreenshot('start-session');

    assert.equal(result.tasks.length, 1, 'one task picked (the recommended first)');
    const added = entries().slice(before);
    assert.deepEqual(
      added.map((e) => [e.type, e.spec, e.focus_task, e.branch]),
      [['session_started', 'harness', result.tasks[0], 'main']],
    );
    assert.equal(result.entry, added[0]!.id);
  });

  it('several parent tasks of a spec: the Multiple Task Warning; "single" keeps the first, "all" logs a scope_override', async () => {
    const md = path.join(workspaceRoot(), '.agent-os/tasks/demo/tasks.md');
    fs.mkdirSync(path.dirname(md), { recursive: true });
    fs.writeFileSync(
      md,
      '# Demo\n\n- [ ] 1. Parser\n  - [ ] 1.1 Tokens\n    - validate: true\n- [ ] 2. Printer\n  - [ ] 2.1 Pretty\n    - validate: true\n',
    );

    // The warning's quick pick, answered by a person: the first item, "Single task (recommended)".
    const single = await acceptingEachPick({ spec: 'demo', tasks: ['1', '2'], confirm: true });
    assert.deepEqual(single?.tasks, ['1']);
    const text = await shownText(/Multiple Task Warning/);
    assert.match(text, /⚠️ {2}Multiple Task Warning\n─+\nYou've selected 2 parent tasks for this session\./);
    assert.match(text, /Recommendation: Start with Task 1/);
    let last = entries().at(-1)!;
    assert.deepEqual([last.type, last.spec, last.focus_task], ['session_started', 'demo', '1']);
    assert.ok(!entries().some((e) => e.type === 'scope_override'));
    assert.deepEqual(single?.imported, ['spec-demo-1.1']);
    assert.ok(readTaskFile().tasks.some((t) => t.id === 'spec-demo-1.1'));

    const all = (await vscode.commands.executeCommand<StartSessionResult>(COMMANDS.startSession, {
      spec: 'demo',
      tasks: ['1', '2'],
      scope: 'all',
      confirm: true,
    }))!;
    assert.deepEqual(all.tasks, ['1', '2']);
    const [override, started] = entries().slice(-2);
    assert.deepEqual(
      [override!.type, override!.requested_tasks, override!.reason, override!.note, override!.spec],
      // The answer reaches `launchpad start` as --all, which the note records.
      ['scope_override', ['1', '2'], 'user_override', `${OVERRIDE_NOTE} (--all)`, 'demo'],
    );
    assert.deepEqual([started!.type, started!.focus_task], ['session_started', '1, 2']);
    const api = await launchpad();
    await eventually('the imported subtasks in the model', () => api.model.snapshot?.byId.has('spec-demo-2.1'));
    last = entries().at(-1)!;
    assert.equal(last.id, all.entry);
  });
});
