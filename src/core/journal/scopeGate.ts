// The scope gate: one session, one parent task. Asking for more shows the Multiple Task
// Warning and asks; "single" keeps the first task, "all" keeps them all and logs a
// scope_override entry. Without a person to ask, only an explicit --all keeps them all (and
// logs the override); otherwise the first is kept and the caller says so.
import type { JournalEntry } from './entrySchema';
import type { Journal } from './journal';

export type ScopeChoice = 'single' | 'all';

export const OVERRIDE_REASON = 'user_override';
export const OVERRIDE_NOTE = 'User chose to execute multiple tasks in single session';

export function multipleTaskWarning(count: number, firstTaskId: string): string {
  const rule = '─────────────────────────────────────────';
  return [
    '⚠️  Multiple Task Warning',
    rule,
    `You've selected ${count} parent tasks for this session.`,
    '',
    'Research suggests focusing on ONE task per session improves:',
    '• Completion rate',
    '• Code quality',
    '• Context retention',
    '',
    `Recommendation: Start with Task ${firstTaskId}`,
    rule,
  ].join('\n');
}

export function scopeQuestion(count: number): string {
  return `Continue with single task (recommended) or all ${count} tasks?`;
}

export const SCOPE_OPTIONS: ReadonlyArray<{ choice: ScopeChoice; label: string }> = [
  { choice: 'single', label: 'Single task (recommended)' },
  { choice: 'all', label: 'All tasks (proceed anyway)' },
];

export interface ScopeRequest {
  /** Parent task ids asked for, in order. */
  requested: string[];
  /** Asks a person (the warning and the question); undefined when nobody can be asked. Resolves undefined when dismissed. */
  ask?: (warning: string, question: string) => Promise<ScopeChoice | undefined>;
  /** --all: proceed with every task without asking. */
  all?: boolean;
  journal: Journal;
  spec?: string;
}

export interface ScopeDecision {
  /** What the session works on; empty when the person dismissed the question. */
  tasks: string[];
  /** Shown to the person when the gate applied. */
  warning?: string;
  /** How the gate was passed. */
  via?: 'asked' | 'all-flag' | 'non-interactive';
  override?: JournalEntry;
  cancelled?: boolean;
}

export async function scopeGate(req: ScopeRequest): Promise<ScopeDecision> {
  const { requested } = req;
  if (requested.length <= 1) return { tasks: [...requested] };
  const warning = multipleTaskWarning(requested.length, requested[0]!);
  const logOverride = (note: string) =>
    req.journal.append({ type: 'scope_override', requested_tasks: [...requested], reason: OVERRIDE_REASON, note, spec: req.spec });
  if (req.all) return { tasks: [...requested], warning, via: 'all-flag', override: await logOverride(`${OVERRIDE_NOTE} (--all)`) };
  if (!req.ask) return { tasks: [requested[0]!], warning, via: 'non-interactive' };
  const choice = await req.ask(warning, scopeQuestion(requested.length));
  if (choice === undefined) return { tasks: [], warning, via: 'asked', cancelled: true };
  if (choice === 'single') return { tasks: [requested[0]!], warning, via: 'asked' };
  return { tasks: [...requested], warning, via: 'asked', override: await logOverride(OVERRIDE_NOTE) };
}
