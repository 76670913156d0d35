// Today's executor: the attempt runs on this machine (taskRun.ts), its processes shown through the
// front end's TerminalFactory (headless child processes in the CLI, VS Code terminals in the
// extension). The default when a controller is given no executor.
import { runTask } from '../controller/taskRun';
import type { AttemptExecutor } from './types';

export const localExecutor: AttemptExecutor = {
  name: 'local',
  run: (s, task, merges, resume, claimed) => runTask(s, task, merges, resume, claimed),
};
