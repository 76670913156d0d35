// A window reload in the middle of a run (its own suite: the reload restarts the extension host,
// and the workbench runs this suite again in the new one). The first pass starts a run from the
// command palette, waits until its agents run, notes what it saw and reloads the window; the
// second finds the note and checks the run went on without the window: the new window attached to
// it (the same running tasks, their terminals showing each agent's output from its first line),
// the run completes, each task is merged once and no agent was started twice.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS } from '../../../src/vscode/contributions';
import type { LaunchpadApi } from '../../../src/vscode/extension';
import { STATE_LABELS } from '../../../src/vscode/views/taskPresentation';
import { eventually, gatedAgent, git, launchpad, progressFile, readTaskFile, shownTask, tasksFile, workspaceRoot } from '../launchpad';
import { task } from '../setup';

const IDS = ['reload-1', 'reload-2', 'reload-3'];

interface Note {
  pid: number;
  agents: Record<string, string>;
  gate: string;
  agent: string;
}

const notePath = () => path.join(path.dirname(workspaceRoot()), 'reload-note.json');
const readNote = (): Note | undefined =>
  fs.existsSync(notePath()) ? (JSON.parse(fs.readFileSync(notePath(), 'utf8')) as Note) : undefined;

/** This host asked for the reload: the tests after the first must not run in it as it goes down. */
let reloading = false;

describe('a window reload mid-run', function () {
  this.timeout(180_000);
  let api: LaunchpadApi;

  before(async () => {
    api = await launchpad();
    await api.model.whenLoaded();
  });

  it('starts a run from the command palette and reloads the window while its agents run', async function () {
    if (readNote()) return this.skip(); // the second pass, after the reload
    const gate = gatedAgent();
    const file = {
      version: 3,
      session_config: { max_parallel_agents: 3 },
      tasks: IDS.map((id) => task(id, `Reload ${id}`, [])),
      session_count: 0,
    };
    fs.writeFileSync(tasksFile(), JSON.stringify(file, null, 2) + '\n');
    fs.writeFileSync(progressFile(), '');
    // The run inherits the window's environment: the agent and its gate.
    process.env.LAUNCHPAD_AGENT = gate.agent;
    process.env.GATE_DIR = gate.gate;
    await api.model.refresh();
    await vscode.commands.executeCommand(COMMANDS.run);
    const run = api.runs.active!;
    assert.ok(run?.startedHere, 'the command started a run');
    for (const id of IDS)
      await eventually(`${id}'s agent running`, () => (api.runs.terminalText(id) ?? '').includes(`gated agent: ${id} attempt 1 started`));
    const agents = Object.fromEntries(IDS.map((id) => [id, String(readTaskFile().tasks.find((t) => t.id === id)?.agent_id)]));
    const note: Note = { pid: run.pid!, agents, gate: gate.gate, agent: gate.agent };
    fs.writeFileSync(notePath(), JSON.stringify(note));
    reloading = true;
    // This extension host ends with the reload; the workbench runs the suite again in the next.
    // The command may fail as the host goes down ("Canceled"): this test waits for the end anyway.
    await vscode.commands.executeCommand('workbench.action.reloadWindow').then(undefined, () => undefined);
    await new Promise(() => undefined);
  });

  it('after the reload: the window is attached to the same run, its tasks running, each terminal showing its agent from the first line', async function () {
    if (reloading) return this.skip(); // the host that is going down: only the next one checks
    const note = readNote();
    assert.ok(note, 'the first pass left its note');
    // The new extension host attaches once it has activated and read the lock: slow on a loaded machine.
    const run = await eventually(
      'the window attached to the run it started before the reload',
      () => (api.runs.active?.pid === note.pid ? api.runs.active : undefined),
      60_000,
    );
    assert.equal(run.startedHere, false, 'nothing in this window started it');
    for (const id of IDS) {
      const shown = await shownTask(api, id);
      assert.equal(shown.group, STATE_LABELS.running, id);
      assert.equal(readTaskFile().tasks.find((t) => t.id === id)?.agent_id, note.agents[id], `${id} is the same attempt`);
      const text = await eventually(`${id}'s terminal`, () => api.runs.terminalText(id)?.replace(/\r/g, ''));
      assert.ok(text.startsWith(`gated agent: ${id} attempt 1 started\n`), JSON.stringify(text.slice(0, 200)));
      assert.ok(
        vscode.window.terminals.some((t) => t.name === `Reload ${id} · ${id}`),
        vscode.window.terminals.map((t) => t.name).join(' | '),
      );
    }
  });

  it('after the reload: the run completes, each task merged once, no agent started twice', async function () {
    // Never in the host that is going down: releasing the agents there would end the run early.
    if (reloading) return this.skip();
    const note = readNote()!;
    const run = api.runs.active!;
    fs.writeFileSync(path.join(note.gate, 'release'), '');
    const outcome = await run.done;
    assert.equal(outcome.exitCode, 0, outcome.message);
    const log = fs.readFileSync(progressFile(), 'utf8');
    for (const id of IDS) {
      assert.equal(readTaskFile().tasks.find((t) => t.id === id)?.status, 'completed', id);
      assert.equal(
        git('log', '--merges', '--format=%s')
          .split('\n')
          .filter((s) => s.startsWith(`Merge [${id}]`)).length,
        1,
        `${id} merged once`,
      );
      assert.equal(log.split('\n').filter((l) => l.includes(`DISPATCH [${id}]`)).length, 1, `${id} dispatched once`);
      assert.deepEqual(fs.readdirSync(path.join(workspaceRoot(), '.launchpad/runs', id)), ['attempt-1'], `${id}: one attempt`);
    }
    const started = fs.readFileSync(path.join(note.gate, 'started'), 'utf8').split('\n').filter(Boolean).sort();
    assert.deepEqual(started, [...IDS].sort(), 'each agent started once');
    await eventually('the terminals ended with their tasks', () => IDS.every((id) => /completed/.test(api.runs.terminalText(id) ?? '')));
  });
});
