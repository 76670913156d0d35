// progress.md, regenerated from progress.json after every append: entries grouped by UTC date,
// newest date first and newest entry first within a date, `---` between dates. Pure.
import { ENTRY_TYPES, type JournalEntry } from './entrySchema';

export const MARKDOWN_TITLE = '# Agent OS Progress Log';

export function renderJournalMarkdown(entries: readonly JournalEntry[]): string {
  if (!entries.length) return `${MARKDOWN_TITLE}\n\nNo entries yet.\n`;
  // Newest first; entries of the same second keep their order of appending, reversed.
  const ordered = entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (a.e.timestamp === b.e.timestamp ? b.i - a.i : a.e.timestamp < b.e.timestamp ? 1 : -1));
  const days: string[] = [];
  let current = '';
  let blocks: string[] = [];
  const flush = () => current && days.push([`## ${current}`, ...blocks].join('\n\n'));
  for (const { e } of ordered) {
    const day = e.timestamp.slice(0, 10);
    if (day !== current) {
      flush();
      current = day;
      blocks = [];
    }
    blocks.push(renderEntry(e));
  }
  flush();
  return `${MARKDOWN_TITLE}\n\n${days.join('\n\n---\n\n')}\n`;
}

export function renderEntry(e: JournalEntry): string {
  const lines = [`### ${e.timestamp.slice(11, 16)} - ${ENTRY_TYPES[e.type].title}`];
  for (const [label, value] of bullets(e)) if (value) lines.push(`- **${label}**: ${value}`);
  return lines.join('\n');
}

/** Label and value of each bullet, in the order a person reads them. */
function bullets(e: JournalEntry): Array<[string, string | undefined]> {
  const task = text(e.task_id) && [text(e.task_id), text(e.task_description)].filter(Boolean).join(' - ');
  switch (e.type) {
    case 'session_started':
      return [
        ['Spec', text(e.spec)],
        ['Focus', `Task ${text(e.focus_task)}`],
        ['Branch', text(e.branch)],
        ['Session', text(e.session)],
        ['Context', text(e.context)],
        ['Environment', text(e.environment)],
      ];
    case 'task_completed':
      return [
        ['Spec', text(e.spec)],
        ['Task', task],
        ['Status', 'COMPLETED'],
        ['Duration', `~${minutes(e.duration_minutes)}`],
        ['Attempts', text(e.attempts)],
        ['Notes', text(e.notes)],
        ['Next', text(e.next_task) && `Task ${text(e.next_task)}`],
      ];
    case 'task_blocked':
      return [
        ['Spec', text(e.spec)],
        ['Task', task],
        ['Status', 'BLOCKED'],
        ['Attempts', text(e.attempts)],
        ['Issue', text(e.issue)],
        ['Resolution', text(e.resolution)],
      ];
    case 'debug_resolved':
      return [
        ['Spec', text(e.spec)],
        ['Task', task],
        ['Issue', text(e.issue)],
        ['Resolution', text(e.resolution)],
        ['Notes', text(e.notes)],
      ];
    case 'session_ended':
      return [
        ['Spec', text(e.spec)],
        ['Session', text(e.session)],
        ['Summary', text(e.summary)],
        ['Next Steps', list(e.next_steps) || 'none'],
      ];
    case 'scope_override':
      return [
        ['Spec', text(e.spec)],
        ['Requested', list(e.requested_tasks)],
        ['Focus', text(e.focus_task)],
        ['Reason', text(e.reason)],
        ['Note', text(e.note)],
      ];
  }
}

/** One line: a value's whitespace runs (newlines included) become one space. */
function text(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  return String(value).replace(/\s+/g, ' ').trim();
}

function list(value: unknown): string | undefined {
  return Array.isArray(value) && value.length ? value.map((v) => text(v)).join('; ') : undefined;
}

function minutes(value: unknown): string {
  const n = typeof value === 'number' ? value : 0;
  const shown = n >= 10 ? Math.round(n) : Math.round(n * 10) / 10;
  return `${shown} minute${shown === 1 ? '' : 's'}`;
}
