import { liveRuns, type StopAction, stopRun, stopTask } from '../../core/runControl';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const stopCommand: Command = {
  name: 'stop',
  usage: 'launchpad stop [ID]',
  summary: "Stop the run of this state root as Ctrl-C does (again: at once), or end one running task's agent.",
  details: [
    "Without ID: each live run of the state root on this machine (the session lock's holder, and concurrent workers) is",
    'asked to stop as Ctrl-C asks it: its agents end, their tasks stay in progress and the next run recovers them. Asked',
    'again while it is stopping, a run ends at once, as a second Ctrl-C ends it (its agents are killed; if it has not',
    'exited five seconds later, its process group is). The process is checked to be the run itself before any signal.',
    '',
    'With ID: the run driving that task\'s attempt ends its agent (within a second): the attempt fails as "stopped by a',
    'person" and is counted like any failed attempt (retried while it has attempts left; its commits are kept under',
    "refs/launchpad/attempts/). The request names the attempt's agent, so it never stops a later attempt. Once the agent has",
    'ended (the attempt is validating or merging) the attempt goes on. Exit 1 when no run on this machine took the request.',
  ].join('\n'),
  options: {},
  positionals: { min: 0, max: 1 },
  async run(ctx) {
    const store = existingStateRoot(ctx, 'stop');
    const paths = store.paths;
    const id = ctx.positionals[0];
    if (id !== undefined) {
      const task = store.load().file.tasks.find((t) => t.id === id);
      if (!task) throw new UsageError(`stop: no task ${id} in ${paths.tasks}`);
      if (task.status !== 'in_progress' || !task.agent_id) {
        ctx.io.out(`${id} is ${task.status}: no agent of it runs\n`);
        return EXIT.INCOMPLETE;
      }
      const answer = await stopTask(paths, id, task.agent_id);
      const said = {
        stopped: `${id}: its agent (${task.agent_id}) is being ended; the attempt fails as stopped by a person`,
        'agent-ended': `${id}: its agent (${task.agent_id}) had ended already; the attempt goes on (validation, merge)`,
        'not-taken': `${id}: no run on this machine drives its attempt (agent ${task.agent_id}); nothing was stopped`,
      }[answer];
      ctx.io.out(`${said}\n`);
      return answer === 'stopped' ? EXIT.OK : EXIT.INCOMPLETE;
    }
    const runs = liveRuns(paths);
    if (!runs.length) {
      ctx.io.out('no run of this state root is running\n');
      return EXIT.INCOMPLETE;
    }
    let code: number = EXIT.OK;
    for (const run of runs) {
      const action = await stopRun(run);
      if (action === 'elsewhere') code = EXIT.INCOMPLETE;
      ctx.io.out(`${describe(run.pid, run.host, action)}\n`);
    }
    return code;
  },
};

function describe(pid: number, host: string, action: StopAction): string {
  switch (action) {
    case 'asked':
      return `pid ${pid}: stopping; its agents are being ended and their tasks left for the next run (launchpad stop again ends it at once)`;
    case 'ended':
      return `pid ${pid}: ended at once; the next run recovers its tasks`;
    case 'killed':
      return `pid ${pid}: did not end when asked again; killed. The next run recovers its tasks`;
    case 'elsewhere':
      return `pid ${pid} runs on ${host}: stop it there`;
  }
}
