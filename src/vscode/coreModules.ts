// The parts of the core that cost real time to load — the task file's zod schema and the long
// run's (built when their modules load), the parsers that read them — plus the settings' zod
// validation. Reached only through loadCore(), never from activation: esbuild bundles a module
// imported only dynamically as a lazy initializer. Nothing here writes: what writes the state is
// the CLI's (run/cli.ts).
export { readTaskFile, TaskFileMissingError } from '../core/taskFile/read';
export { readPool } from '../core/worktrees/poolReport';
// The integration gate's record of the base branch, for the status bar and a reverted task's hover.
export { readIntegrationState } from '../core/integration/state';
export { parseSettings } from './settingsValidation';
// A long run of milestones: loading and status for the Milestones view.
export { loadLongRun } from '../core/milestones/longRun';
export { buildStatus as buildLongRunStatus } from '../core/milestones/statusBlock';
export { askingTask, describeExhausted, exhaustedTask } from '../core/runNotices';
// The task file's fields Launchpad does not read, marked in the editor as the CLI warns of them.
export { unknownFieldMessage, unknownFieldsInText } from '../core/taskFile/unknownFields';
