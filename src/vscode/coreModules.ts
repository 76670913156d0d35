// The parts of the core that cost real time to load — the task file's zod schema (built when its
// module loads) and what writes the state — plus the settings' zod validation. Reached only through loadCore(),
// never from activation: esbuild bundles a module imported only dynamically as a lazy initializer.
export { GITIGNORE_ENTRIES, initStateFiles } from '../core/init';
export { Journal } from '../core/journal/journal';
export { JournalPaths } from '../core/journal/journalPaths';
export { SCOPE_OPTIONS, scopeGate } from '../core/journal/scopeGate';
export { confirmSession, focusChoices, focusQuestion, planFocus } from '../core/journal/sessionFocus';
export { gatherStartup } from '../core/journal/startup';
export { renderStartupMarkdown } from '../core/journal/startupReport';
export { listSpecs } from '../core/specTasks/specFiles';
export { StateStore, TaskFileMissingError } from '../core/taskFile/store';
export { addTaskLogged, retryTaskLogged } from '../core/tasks/edits';
export { clearPool } from '../core/worktrees/poolClear';
export { readPool } from '../core/worktrees/poolReport';
export { parseSettings } from './settingsValidation';
// A long run of milestones: loading and status for the Milestones view, the decisions.
export { Git } from '../core/git/git';
export { tryAcquireLock } from '../core/lock';
export { abortRun, approve, cleanUp, reject, retry, skip } from '../core/milestones/decisions';
export { loadLongRun, LongRunStore } from '../core/milestones/longRun';
export { buildStatus as buildLongRunStatus } from '../core/milestones/statusBlock';
export { describeExhausted, exhaustedTask } from '../core/runNotices';
