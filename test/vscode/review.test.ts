// Review before merge, as the window shows it: a task under manual review passes its validation
// and waits (the run goes on with the others and ends with exit 8), a notification "<id> awaits
// your review" with a Review button, its own group and icon; Review Changes… opens its files in
// the multi-file diff, a person comments on two lines of two files, Request Changes sends them and
// the next run resumes the same agent with both comments in its prompt; Approve, and the run
// after merges it once. The workspace's task file and log are restored.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import type { RunOutcome } from '../../src/core/controller/types';
import { COMMANDS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { STATE_LABELS } from '../../src/vscode/views/taskPresentation';
import { eventually, git, launchpad, progressFile, readTaskFile, shownTask, tasksFile, tooltipText, workspaceRoot } from './launchpad';
import { task } from './setup';

async function runAndWait(api: LaunchpadApi): Promise<RunOutcome> {
  await vscode.commands.executeCommand(COMMANDS.run);
  const run = api.runs.active;
  assert.ok(run, 'launchpad.run started a run');
  return run.done;
}

interface Round {
  number: number;
  commit: string;
  verdict?: string;
  comments?: Array<{ file: string; line: number; text: string; comment: string }>;
}

const taskOf = (id: string) => readTaskFile().tasks.find((t) => t.id === id)!;
const roundOf = (id: string) => taskOf(id).review_round as Round;

/** The modified side of each file the active tab compares, when it is a multi-file diff. */
function multiDiffFiles(): vscode.Uri[] | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (!input || typeof input !== 'object' || !('textDiffs' in input)) return undefined;
  const diffs = (input as { textDiffs: Array<{ modified: vscode.Uri }> }).textDiffs;
  return diffs.map((d) => d.modified);
}

describe('review before merge', function () {
  this.timeout(180_000);
  let api: LaunchpadApi;
  let savedTasks: string;
  // The log may not exist yet: the suite's files run in no fixed order, and only a run creates it.
  let savedLog: string | undefined;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
    savedLog = fs.existsSync(progressFile()) ? fs.readFileSync(progressFile(), 'utf8') : undefined;
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.writeFileSync(tasksFile(), savedTasks);
    if (savedLog === undefined) fs.rmSync(progressFile(), { force: true });
    else fs.writeFileSync(progressFile(), savedLog);
    await api.model.refresh();
  });

  it('waits for review; comments on two files go back to the agent; approved, it merges once', async () => {
    const file = {
      version: 3,
      session_config: { max_parallel_agents: 2, retry_backoff_seconds: 0 },
      tasks: [
        task('rv-1', 'Write two files [review]', [], {
          review: 'manual',
          validation: { command: 'test -f src/rv-1/a.txt && test -f src/rv-1/b.txt', timeout_seconds: 60 },
        }),
        task('rv-2', 'Write the changelog', []),
      ],
      session_count: 0,
    };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    await api.model.refresh();

    const first = await runAndWait(api);
    assert.equal(first.exitCode, 8, first.message);
    assert.equal(taskOf('rv-1').status, 'awaiting_review');
    assert.equal(taskOf('rv-2').status, 'completed', 'the other task merged meanwhile');
    assert.equal(roundOf('rv-1').number, 1);

    // Told as it happened, with a button that opens the review.
    const notice = await eventually('the review notification', () =>
      api.notices().find((n) => n.message === 'Launchpad: rv-1 awaits your review (round 1)'),
    );
    assert.deepEqual(Object.keys(notice.actions), ['Review']);

    // Its own group and icon, the round and the commit in its hover.
    const shown = await shownTask(api, 'rv-1');
    assert.equal(shown.group, STATE_LABELS.awaiting_review);
    assert.equal((shown.item.iconPath as vscode.ThemeIcon).id, 'git-pull-request');
    assert.match(shown.item.contextValue ?? '', /^task:awaiting_review/);
    assert.match(tooltipText(shown.item), new RegExp(`Review:\\*\\* round 1, commit ${roundOf('rv-1').commit.slice(0, 7)}`));

    // The button: the multi-file diff of its changes, the worktree's files on the right.
    await notice.actions.Review!();
    const files = await eventually('the multi-file diff of rv-1', multiDiffFiles);
    const fileA = files.find((u) => u.path.endsWith('/src/rv-1/a.txt'));
    const fileB = files.find((u) => u.path.endsWith('/src/rv-1/b.txt'));
    assert.ok(fileA && fileB, `both files in the diff: ${files.map((u) => u.toString()).join(', ')}`);
    assert.equal(fileA.scheme, 'file', 'the modified side is the file in the worktree');
    assert.notEqual(fileA.fsPath, path.join(workspaceRoot(), 'src/rv-1/a.txt'), 'not the main working tree');

    // The changed files take comments; other files do not.
    const ranges = api.review.controller.commentingRangeProvider!;
    const commentable = async (uri: vscode.Uri) => {
      const doc = await vscode.workspace.openTextDocument(uri);
      const r = await ranges.provideCommentingRanges(doc, new vscode.CancellationTokenSource().token);
      return Array.isArray(r) && r.length > 0;
    };
    assert.equal(await commentable(fileA), true);
    assert.equal(await commentable(vscode.Uri.file(path.join(workspaceRoot(), 'README.md'))), false);

    // Two comments on two files, as a person's clicks make them: a thread on a line, then its reply button.
    const comment = async (uri: vscode.Uri, line: number, text: string) => {
      const thread = api.review.controller.createCommentThread(uri, new vscode.Range(line - 1, 0, line - 1, 0), []);
      await vscode.commands.executeCommand(COMMANDS.addReviewComment, { thread, text });
      return thread;
    };
    const threadA = await comment(fileA, 2, 'Say "two" as a numeral');
    await comment(fileB, 1, 'Start with a capital letter\nand end with a full stop');
    assert.equal(threadA.comments.length, 1);
    assert.equal(threadA.comments[0]!.label, 'Draft');
    assert.deepEqual(
      api.review.drafts('rv-1').map((d) => `${d.file}:${d.line}`),
      ['src/rv-1/a.txt:2', 'src/rv-1/b.txt:1'],
    );

    // Request Changes from the thread's title menu: both drafts go, the task is pending again.
    await vscode.commands.executeCommand(COMMANDS.requestChanges, threadA);
    assert.equal(taskOf('rv-1').status, 'pending');
    const requested = roundOf('rv-1');
    assert.equal(requested.verdict, 'changes_requested');
    assert.deepEqual(
      requested.comments?.map((c) => [c.file, c.line, c.text, c.comment]),
      [
        ['src/rv-1/a.txt', 2, 'alpha two', 'Say "two" as a numeral'],
        ['src/rv-1/b.txt', 1, 'beta one', 'Start with a capital letter\nand end with a full stop'],
      ],
    );
    assert.deepEqual(api.review.drafts('rv-1'), [], 'the drafts are cleared');

    // The next run resumes the same agent with both comments; its work waits for review again.
    const second = await runAndWait(api);
    assert.equal(second.exitCode, 8, second.message);
    assert.equal(taskOf('rv-1').status, 'awaiting_review');
    assert.equal(roundOf('rv-1').number, 2);
    const seen = git('show', `${roundOf('rv-1').commit}:src/rv-1/prompt-seen.txt`);
    assert.match(seen, /^## Requested Changes \(review round \d+\)$/m);
    assert.ok(seen.includes('- `src/rv-1/a.txt` line 2: `alpha two`\n  > Say "two" as a numeral'), seen);
    assert.ok(seen.includes('- `src/rv-1/b.txt` line 1: `beta one`\n  > Start with a capital letter\n  > and end with a full stop'), seen);
    await eventually('the round 2 notification', () =>
      api.notices().find((n) => n.message === 'Launchpad: rv-1 awaits your review (round 2)'),
    );

    // Approve from the row: the run after merges it first, once, without an agent.
    await vscode.commands.executeCommand(COMMANDS.approveTask, shown.node);
    assert.equal(taskOf('rv-1').status, 'pending');
    assert.equal(roundOf('rv-1').verdict, 'approved');
    const third = await runAndWait(api);
    assert.equal(third.exitCode, 0, third.message);
    assert.equal(taskOf('rv-1').status, 'completed');
    assert.equal(git('log', '--merges', '--format=%s', 'main').match(/^Merge \[rv-1\]/gm)?.length, 1);
    assert.match(fs.readFileSync(path.join(workspaceRoot(), 'src/rv-1/a.txt'), 'utf8'), /changed as asked/);
    assert.ok(fs.existsSync(path.join(workspaceRoot(), 'src/rv-2/done.txt')), "the other task's work is there too");
    const log = fs.readFileSync(progressFile(), 'utf8');
    assert.match(log, /DISPATCH \[rv-1\] .*review=round-1/);
    assert.match(log, /DISPATCH \[rv-1\] .*approved=round-2/);
  });
});
