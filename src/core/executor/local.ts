// Today's executor: the attempt runs on this machine (taskRun.ts), its processes started through
// the run's TerminalFactory (child processes, their output teed where the CLI shows it). The
// default when a controller is given no executor.
import { runTask } from '../controller/taskRun';
import type { AttemptExecutor } from './types';

export const localExecutor: AttemptExecutor = {
  name: 'local',
  run: (s, task, merges, resume, claimed) => runTask(s, task, merges, resume, claimed),
};
