// An agent's question, as the window shows it: the run goes on with the other tasks, a
// notification "<id> asks: …" with an Answer button, the task in its own group with its own icon
// and the question in its hover; Answer Question… on its row (an input box; Esc changes nothing)
// runs `launchpad answer`, and the next run resumes that agent in the same worktree and branch,
// its earlier commit present, and merges it. The workspace's task file and log are restored.
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

const QUESTION = 'Which port should the server use?';

async function runAndWait(api: LaunchpadApi): Promise<RunOutcome> {
  await vscode.commands.executeCommand(COMMANDS.run);
  const run = api.runs.active;
  assert.ok(run, 'launchpad.run started a run');
  return run.done;
}

describe('an agent asks a question', function () {
  this.timeout(120_000);
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
    fs.writeFileSync(tasksFile(), savedTasks);
    if (savedLog === undefined) fs.rmSync(progressFile(), { force: true });
    else fs.writeFileSync(progressFile(), savedLog);
    await api.model.refresh();
  });

  it('asks: the notification with Answer, the task awaiting in the view; answering from the tree resumes it in the same worktree, it merges', async () => {
    const file = {
      version: 3,
      session_config: { max_parallel_agents: 2, retry_backoff_seconds: 0 },
      tasks: [
        task('ask-1', 'Serve it [ask]', [], {
          validation: { command: 'test -f src/ask-1/part1.txt && test -f src/ask-1/done.txt', timeout_seconds: 60 },
        }),
        task('ask-2', 'Write the footer', []),
      ],
      session_count: 0,
    };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    await api.model.refresh();

    const first = await runAndWait(api);
    assert.equal(first.exitCode, 8, first.message);
    const status = (id: string) => readTaskFile().tasks.find((t) => t.id === id)?.status;
    assert.equal(status('ask-1'), 'awaiting_answer');
    assert.equal(status('ask-2'), 'completed', 'the other task merged meanwhile');
    assert.match(git('log', '--merges', '--format=%s', 'main'), /^Merge \[ask-2\] Write the footer$/m);
    const asked = git('rev-parse', 'harness-ask-1').trim();

    // Told as it happened, with a button that answers.
    const notice = await eventually('the question notification', () =>
      api.notices().find((n) => n.message === `Launchpad: ask-1 asks: ${QUESTION}`),
    );
    assert.deepEqual(Object.keys(notice.actions), ['Answer']);

    // Its own group and icon, the question in its hover.
    const shown = await shownTask(api, 'ask-1');
    assert.equal(shown.group, STATE_LABELS.awaiting_answer);
    assert.equal((shown.item.iconPath as vscode.ThemeIcon).id, 'question');
    assert.match(tooltipText(shown.item), new RegExp(`Asks:\\*\\* ${QUESTION.replace('?', '\\?')}`));
    assert.match(shown.item.contextValue ?? '', /^task:awaiting_answer/);

    // Answer Question… from the row: Esc in its input box changes nothing.
    const before = fs.readFileSync(tasksFile(), 'utf8');
    let settled = false;
    const pending = Promise.resolve(vscode.commands.executeCommand(COMMANDS.answerQuestion, shown.node)).finally(() => (settled = true));
    await eventually('the input box to go away on Esc', async () => {
      await new Promise((r) => setTimeout(r, 300));
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      return settled;
    });
    await pending;
    assert.equal(fs.readFileSync(tasksFile(), 'utf8'), before);

    // The answer, given on the row's item.
    await vscode.commands.executeCommand(COMMANDS.answerQuestion, { ...shown.node, answer: '8080' });
    const answered = readTaskFile().tasks.find((t) => t.id === 'ask-1')!;
    assert.equal(answered.status, 'pending');
    assert.equal((answered.question as { answer: string }).answer, '8080');

    const second = await runAndWait(api);
    assert.equal(second.exitCode, 0, second.message);
    assert.equal(status('ask-1'), 'completed');
    // The same agent's branch went on: the commit made before the question is in main's history.
    git('merge-base', '--is-ancestor', asked, 'main');
    assert.equal(fs.readFileSync(path.join(workspaceRoot(), 'src/ask-1/port.txt'), 'utf8').trim(), '8080');
    const log = fs.readFileSync(progressFile(), 'utf8');
    assert.match(log, /DISPATCH \[ask-1\] agent=\S+ worktree=harness-ask-1 answered=attempt-1/);
    assert.equal(git('log', '--merges', '--format=%s', 'main').match(/^Merge \[ask-1\]/gm)?.length, 1);
  });
});
