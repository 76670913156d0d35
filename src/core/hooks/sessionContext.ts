// What a fresh context (a new session, a resume, after /clear or compaction) is told about the
// task list: the current task with its checkpoints and last error, the next eligible tasks and
// the last lines of the log. Pure: tested on literal strings.
import { computeStats } from '../tasks/stats';
import { describeTask, focusOf, type StateSnapshot, validatedSinceStart } from './stateView';

/** Agents cap injected context (Claude Code at 10,000 characters); stay well under. */
const MAX_CHARS = 8000;
const SHOWN_CHECKPOINTS = 8;
const SHOWN_NEXT = 5;
const SHOWN_LOG_LINES = 10;
const MAX_LINE = 300;
const MAX_CONTEXT = 1200;

export function sessionStartContext(snap: StateSnapshot, source?: string): string {
  const lines = [`Launchpad harness in ${snap.root}${source ? ` (session ${source})` : ''}: .harness-active is present, so work remains.`];
  if (snap.run) {
    lines.push(`${snap.run.command} (pid=${snap.run.pid}) is working this task list now: do not work its tasks by hand as well.`);
  }
  if (!snap.file) {
    lines.push(`harness-tasks.json cannot be used: ${snap.fileError ?? 'it cannot be read'}`);
    lines.push('Restore it from harness-tasks.json.bak if that copy is valid, or fix the field named, before anything else.');
  } else {
    const st = computeStats(snap.file.tasks);
    lines.push(
      `Tasks: ${st.tasks_total} total, ${st.completed} completed, ${st.in_batch} in progress, ${st.pending} pending, ${st.failed} failed, ${st.blocked} blocked.`,
    );
    const { current, inProgress, next } = focusOf(snap.file, snap.workerId);
    if (current) {
      const state = inProgress
        ? validatedSinceStart(current.id, snap.recentLog)
          ? 'in progress, validation passed: record it as completed'
          : 'in progress: resume it from its last checkpoint'
        : 'not started: it is the next eligible task';
      lines.push(
        '',
        `Current task: ${describeTask(current)} (${state}; attempts used ${current.attempts} of ${current.max_attempts}, ${current.priority})`,
      );
      const validation = current.validation?.command?.trim();
      lines.push(
        `  Validation: ${validation ? `${validation}${current.validation?.timeout_seconds ? ` (timeout ${current.validation.timeout_seconds} s)` : ''}` : 'none yet (required before it can be completed)'}`,
      );
      if (current.depends_on.length) lines.push(`  Depends on: ${current.depends_on.join(', ')}`);
      if (current.files_hint.length) lines.push(`  Files: ${current.files_hint.join(', ')}`);
      if (current.context) lines.push(`  Context: ${clip(current.context.replace(/\s+/g, ' '), MAX_CONTEXT)}`);
      if (current.error_log.length) lines.push(`  Last error: ${clip(current.error_log.at(-1)!, MAX_LINE)}`);
      const checkpoints = current.checkpoints ?? [];
      if (checkpoints.length) {
        lines.push(
          `  Checkpoints${checkpoints.length > SHOWN_CHECKPOINTS ? ` (last ${SHOWN_CHECKPOINTS} of ${checkpoints.length})` : ''}:`,
        );
        for (const c of checkpoints.slice(-SHOWN_CHECKPOINTS))
          lines.push(`    step ${c.step}/${c.total} ${clip(c.description, MAX_LINE)} (${c.timestamp})`);
      } else if (inProgress) {
        lines.push('  Checkpoints: none recorded');
      }
    } else {
      lines.push(
        '',
        'No task is in progress and none is eligible: the rest are completed, failed for good, blocked, or lack a validation command.',
      );
    }
    if (next.length) {
      lines.push('', `Next eligible${next.length > SHOWN_NEXT ? ` (first ${SHOWN_NEXT} of ${next.length})` : ''}:`);
      for (const t of next.slice(0, SHOWN_NEXT)) lines.push(`  ${describeTask(t)} (${t.status}, ${t.priority})`);
    }
  }
  const log = snap.recentLog.slice(-SHOWN_LOG_LINES);
  lines.push('', 'Last lines of harness-progress.txt:', ...(log.length ? log.map((l) => `  ${clip(l, MAX_LINE)}`) : ['  (empty)']));
  lines.push(
    '',
    'Work the tasks one at a time: finish the current one, run its validation command, record the outcome in harness-tasks.json and harness-progress.txt (CHECKPOINT lines as you go), then take the next eligible task.',
  );
  return clip(lines.join('\n'), MAX_CHARS);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
