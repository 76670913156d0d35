// Every id the extension shares with package.json, in one table: commands, views, settings,
// context keys. A host test checks this table and package.json agree both ways.

export const COMMANDS = {
  run: 'launchpad.run',
  stop: 'launchpad.stop',
  /** Ends one running task's agent (as `launchpad stop ID`). */
  stopTask: 'launchpad.stopTask',
  status: 'launchpad.status',
  addTask: 'launchpad.addTask',
  init: 'launchpad.init',
  retryTask: 'launchpad.retryTask',
  /** Answers the question a task's agent asked (as `launchpad answer ID`), from an input box. */
  answerQuestion: 'launchpad.answerQuestion',
  /** Opens a task awaiting review in the multi-file diff, its changed files open to comments (as `launchpad review ID`). */
  reviewTask: 'launchpad.reviewTask',
  /** The next run merges a task awaiting review (as `launchpad approve ID`). */
  approveTask: 'launchpad.approveTask',
  /** Sends a task's draft comments; the next run resumes its agent with them (as `launchpad request-changes ID`). */
  requestChanges: 'launchpad.requestChanges',
  /** A review thread's reply button: the text becomes a draft comment. */
  addReviewComment: 'launchpad.addReviewComment',
  filterLog: 'launchpad.filterLog',
  /** Session start-up: the summary, the scope gate, the focus question (the journal's session_started). */
  startSession: 'launchpad.startSession',
  refresh: 'launchpad.refresh',
  viewByState: 'launchpad.viewByState',
  viewByDependency: 'launchpad.viewByDependency',
  showTranscript: 'launchpad.showTranscript',
  revealInLog: 'launchpad.revealInLog',
  openWorktree: 'launchpad.openWorktree',
  openWorktreeTerminal: 'launchpad.openWorktreeTerminal',
  compareWorktree: 'launchpad.compareWorktree',
  removeWorktree: 'launchpad.removeWorktree',
  /** Removes the worktree pool's idle slots (session_config.worktree_pool). */
  clearWorktreePool: 'launchpad.clearWorktreePool',
  showOutput: 'launchpad.showOutput',
  installHooks: 'launchpad.installHooks',
  /** Open Task, what a click on a task runs: its terminal while it runs, else its details. */
  taskClicked: 'launchpad.taskClicked',
  /** Reveal a task in the Tasks view by id (links in the progress log). */
  revealTask: 'launchpad.revealTask',
  /** The "show more" item of a long list in the Tasks view. */
  showMore: 'launchpad.showMore',
  /** The task DAG drawn in a panel: registered by dag/. */
  showTaskGraph: 'launchpad.showTaskGraph',
  // The Milestones view (a long run): registered by milestones/.
  runLongRun: 'launchpad.runLongRun',
  stopLongRun: 'launchpad.stopLongRun',
  /** Opens the plan beside the question Approve / Reject. */
  reviewPlan: 'launchpad.reviewPlan',
  approveMilestone: 'launchpad.approveMilestone',
  rejectPlan: 'launchpad.rejectPlan',
  retryMilestone: 'launchpad.retryMilestone',
  skipMilestone: 'launchpad.skipMilestone',
  refreshMilestones: 'launchpad.refreshMilestones',
} as const;
export type CommandId = (typeof COMMANDS)[keyof typeof COMMANDS];

export const VIEWS = {
  tasks: 'launchpad.tasks',
  worktrees: 'launchpad.worktrees',
  milestones: 'launchpad.milestones',
} as const;

/** The settings' keys; each setting is declared (type, default, description) in settingsSchema.ts. */
export { SETTINGS } from './settingsSchema';

export const CONTEXT_KEYS = {
  hasTaskFile: 'launchpad.hasTaskFile',
  running: 'launchpad.running',
  tasksViewMode: 'launchpad.tasksViewMode',
  /** The workspace has a long run (a docs/engineering-discipline/harness/<name>/ folder): the Milestones view shows. */
  hasLongRun: 'launchpad.hasLongRun',
  /** A long run (milestones) is going in this window. */
  longRunning: 'launchpad.longRunning',
} as const;

export const LOG_LANGUAGE_ID = 'launchpad-log';
export const TASK_TYPE = 'launchpad';
