// The integration gate as the window shows it: the status bar's base item (green, red, checking,
// from .launchpad/integration.json as the run writes it) and a reverted task's hover with the
// failing output and the task it collided with. The workspace's task file is restored after.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import type { LaunchpadApi } from '../../src/vscode/extension';
import { eventually, launchpad, shownTask, tasksFile, tooltipText, workspaceRoot } from './launchpad';
import { task } from './setup';

const integrationFile = () => path.join(workspaceRoot(), '.launchpad/integration.json');

function writeState(status: 'green' | 'red' | 'checking', reverted: unknown[] = []): void {
  fs.mkdirSync(path.dirname(integrationFile()), { recursive: true });
  const state = {
    version: 1,
    status,
    commit: 'c0ffee1234567890',
    checked_at: '2026-11-28T03:00:00Z',
    last_green: 'abcdef1234567890',
    flaky: [{ commit: 'abcdef1234567890', at: '2026-11-28T02:50:00Z' }],
    reverted,
  };
  fs.writeFileSync(integrationFile(), JSON.stringify(state, null, 2) + '\n');
}

describe('the integration gate in the window', function () {
  this.timeout(60_000);
  let api: LaunchpadApi;
  let savedTasks: string;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    savedTasks = fs.readFileSync(tasksFile(), 'utf8');
  });
  after(async () => {
    fs.rmSync(integrationFile(), { force: true });
    fs.writeFileSync(tasksFile(), savedTasks);
    await api.model.refresh();
  });

  it("the status bar shows the base green, red or checking as the gate records it; a reverted task's hover names the merge, the task it collided with and the failing output", async () => {
    const failing = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\nNameError: name \'add\' is not defined';
    const reason = `reverted: the base failed its integration check after it merged together with rename-1: NameError: name 'add' is not defined`;
    fs.writeFileSync(
      tasksFile(),
      JSON.stringify(
        {
          version: 3,
          session_config: { integration_check: { command: 'python3 app.py' } },
          session_count: 1,
          tasks: [
            task('rename-1', 'Rename add to sum', [], {
              status: 'completed',
              attempts: 1,
              validation: { command: 'true', timeout_seconds: 60 },
            }),
            task('caller-2', 'Call add from the report', [], {
              attempts: 1,
              validation: { command: 'true', timeout_seconds: 60 },
              error_log: [`[INTEGRATION] ${reason}`],
              error_tail: `The work was reverted.\n${failing}`,
            }),
          ],
        },
        null,
        2,
      ) + '\n',
    );
    writeState('red', [
      {
        task: 'caller-2',
        merge: '1111111aaaaaaa',
        revert: '2222222bbbbbbb',
        reason,
        collided_with: ['rename-1'],
        at: '2026-11-28T03:01:00Z',
      },
    ]);
    await api.model.refresh();
    const red = await eventually('the base shown red', () => (api.shownBase().text === '$(error) Base red' ? api.shownBase() : undefined));
    // As a person reads it: Markdown's escapes undone.
    const tip = red.tooltip!.replace(/\\([\\`*_{}[\]()#+\-.!|<>~&$])/g, '$1');
    assert.match(tip, /\*\*Integration check of the base branch:\*\* red at `c0ffee1`/);
    assert.match(tip, /\*\*Flaky results:\*\* 1 \(the last at `abcdef1`/);
    assert.match(tip, /\*\*Reverted caller-2:\*\* merge `1111111` by `2222222`; collided with rename-1/);

    const hover = tooltipText((await shownTask(api, 'caller-2')).item);
    assert.match(hover, /Reverted from the base:\W+merge 1111111 reverted by 2222222 \(2026-11-28T03:01:00Z\); it collided with rename-1/);
    assert.match(hover, /NameError: name 'add' is not defined/);
    assert.doesNotMatch(tooltipText((await shownTask(api, 'rename-1')).item), /Reverted from the base/);

    // The file changes as a run writes it; the window follows without being asked.
    writeState('checking');
    await eventually('the base shown checking', () => api.shownBase().text === '$(sync~spin) Base checking');
    writeState('green');
    await eventually('the base shown green', () => api.shownBase().text === '$(pass) Base green');

    // Without a check configured and no record, nothing is shown.
    fs.rmSync(integrationFile());
    await eventually('the base item hidden', () => api.shownBase().text === undefined);
  });
});
