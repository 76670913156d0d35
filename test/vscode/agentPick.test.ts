// Run with no agent set anywhere asks which one: the installed presets (a fake `claude` put first
// on the extension host's PATH) or a command line. The shared workspace is put back afterwards:
// its task file, progress log, settings and main branch.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS, SETTINGS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import { CLAUDE_SUCCESS } from '../unit/agents/transcripts';
import { answeringPicks, git, launchpad, progressFile, readTaskFile, tasksFile } from './launchpad';

/** A `claude` that answers --version, records its arguments, does the task, commits and prints Claude Code's stream-json. */
function fakeClaude(bin: string, argsFile: string): void {
  const script = `#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.140 (Claude Code, fake)"; exit 0; fi
printf '%s\\n' "$@" > '${argsFile}'
cat > /dev/null
mkdir -p "src/$LAUNCHPAD_TASK_ID"
echo "done by the fake claude" > "src/$LAUNCHPAD_TASK_ID/done.txt"
git add -A
git commit -q -m "[$LAUNCHPAD_TASK_ID] by the fake claude"
cat <<'EOF'
${CLAUDE_SUCCESS.trimEnd()}
EOF
`;
  fs.writeFileSync(path.join(bin, 'claude'), script, { mode: 0o755 });
}

describe('run: choosing the agent when none is set', function () {
  this.timeout(120_000);
  let api: LaunchpadApi;
  const saved: {
    tasks: string;
    progress: string;
    head: string;
    agent: string | undefined;
    path: string | undefined;
    env: string | undefined;
  } = {
    tasks: '',
    progress: '',
    head: '',
    agent: undefined,
    path: undefined,
    env: undefined,
  };
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'launchpad-fake-bin-'));
  const argsFile = path.join(bin, 'claude.args');

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
    saved.tasks = fs.readFileSync(tasksFile(), 'utf8');
    saved.progress = fs.readFileSync(progressFile(), 'utf8');
    saved.head = git('rev-parse', 'main').trim();
    saved.agent = vscode.workspace.getConfiguration().inspect<string>(SETTINGS.agentCommand)?.workspaceValue;
    saved.path = process.env.PATH;
    saved.env = process.env.LAUNCHPAD_AGENT;
    // One task of its own, so the shared fixture's tasks stay pending for the other suites.
    const file = readTaskFile();
    const pick: Record<string, unknown> & { id: string } = {
      ...file.tasks[0]!,
      id: 'task-pick',
      title: 'Chosen agent',
      depends_on: [],
      files_hint: ['src/task-pick/'],
      validation: { command: 'test -f src/task-pick/done.txt', timeout_seconds: 60 },
    };
    file.tasks = [pick];
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    fakeClaude(bin, argsFile);
    process.env.PATH = `${bin}${path.delimiter}${process.env.PATH ?? ''}`;
    delete process.env.LAUNCHPAD_AGENT;
    await vscode.workspace.getConfiguration().update(SETTINGS.agentCommand, undefined, vscode.ConfigurationTarget.Workspace);
    await api.model.refresh();
  });

  after(async () => {
    process.env.PATH = saved.path;
    if (saved.env !== undefined) process.env.LAUNCHPAD_AGENT = saved.env;
    const config = vscode.workspace.getConfiguration();
    await config.update(SETTINGS.agentCommand, saved.agent, vscode.ConfigurationTarget.Workspace);
    await config.update(SETTINGS.agentPreset, undefined, vscode.ConfigurationTarget.Workspace);
    git('reset', '-q', '--hard', saved.head);
    if (git('branch', '--list', 'harness-task-pick').trim()) git('branch', '-D', 'harness-task-pick');
    fs.writeFileSync(tasksFile(), saved.tasks);
    fs.writeFileSync(progressFile(), saved.progress);
    fs.rmSync(bin, { recursive: true, force: true });
    await api.model.refresh();
  });

  it('Esc at the quick pick starts nothing', async () => {
    await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.run), 'esc');
    assert.equal(api.runs.active, undefined);
    assert.equal(readTaskFile().tasks[0]!.status, 'pending');
    assert.ok(!fs.existsSync(argsFile), 'the fake claude did not run');
  });

  it('offers the installed claude preset; choosing it (for this run only) runs the task with the preset', async () => {
    // Enter takes the first item of each pick: the installed `claude`, then "for this run".
    await answeringPicks(() => vscode.commands.executeCommand(COMMANDS.run));
    const run = api.runs.active;
    assert.ok(run, 'the run started');
    const outcome = await run.done;
    assert.equal(outcome.exitCode, 0, outcome.message);
    assert.equal(readTaskFile().tasks[0]!.status, 'completed');
    assert.match(git('log', '--merges', '--format=%s', 'main'), /^Merge \[task-pick\] Chosen agent$/m);
    // The preset's command line, not a bare `claude`.
    assert.deepEqual(fs.readFileSync(argsFile, 'utf8').split('\n').filter(Boolean), [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--dangerously-skip-permissions',
    ]);
    // Not remembered: the settings are as they were.
    assert.equal(vscode.workspace.getConfiguration().inspect(SETTINGS.agentPreset)?.workspaceValue, undefined);
    assert.equal(vscode.workspace.getConfiguration().inspect(SETTINGS.agentCommand)?.workspaceValue, undefined);
  });
});
