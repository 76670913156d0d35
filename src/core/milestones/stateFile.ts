// state.md: the whole memory of a long run — the overall status, the project's verification
// commands, the agents, settings, every milestone's status and counters, and the append-only
// execution log. Parsed into a typed value (fields checked by zod, errors at file:line) and
// written back whole; the log's existing lines are always written back unchanged.
import * as z from 'zod/mini';

import { type FieldValue, LongRunFormatError, oneLine, quoteCode, readDocument, readFields, type Section, unquote } from './markdown';
import { compareMilestoneIds, MILESTONE_ID } from './milestoneFile';
import { MILESTONE_STATUSES, OVERALL_STATUSES } from './transitions';
import { describeIssue } from './zodIssues';

/** A decision a milestone waits for besides plan approval (awaiting_approval) and a failure (failed). */
export const MILESTONE_GATES = ['integration', 'duration'] as const;
export type MilestoneGate = (typeof MILESTONE_GATES)[number];

/** A decision the whole run waits for. */
export const OVERALL_GATES = ['e2e'] as const;

const text = () => z.nullable(z.string());
const count = z.pipe(
  z.string().check(z.regex(/^\d+$/, { error: 'expected a whole number' })),
  z.transform((s) => Number(s)),
);
const flag = z.pipe(
  z.string().check(z.regex(/^(yes|no)$/i, { error: 'expected yes or no' })),
  z.transform((s) => s.toLowerCase() === 'yes'),
);
const timestamp = z.nullable(
  z.string().check(z.refine((s) => !Number.isNaN(Date.parse(s)), { error: 'expected a date and time (2025-07-01T10:00:00Z)' })),
);
const duration = z.pipe(
  z
    .string()
    .check(
      z.regex(/^(\d+h)?(\d+m)?(\d+s)?$/, { error: 'expected a duration such as 2h, 90m, 1h30m or 45s' }),
      z.minLength(2, { error: 'expected a duration such as 2h, 90m or 45s' }),
    ),
  z.transform(parseDuration),
);
const factor = z.pipe(
  z.string().check(z.regex(/^\d+(\.\d+)?$/, { error: 'expected a number' })),
  z.transform((s) => Number(s)),
);
const idList = z.array(z.string().check(z.regex(MILESTONE_ID, { error: 'expected milestone ids (M1, M2)' })));

export const milestoneStateSchema = z.strictObject({
  id: z.string().check(z.regex(MILESTONE_ID, { error: 'expected "### M<N>" (M followed by a number)' })),
  status: z.enum(MILESTONE_STATUSES),
  attempts: z._default(count, 0),
  plan: z._default(text(), null),
  review: z._default(text(), null),
  checkpoint: z._default(text(), null),
  /** When the milestone first entered planning (its Duration counts from here). */
  started: z._default(timestamp, null),
  /** When it entered its current status: the duration guard measures planning and executing from here. */
  since: z._default(timestamp, null),
  completed: z._default(timestamp, null),
  awaiting: z._default(z.nullable(z.enum(MILESTONE_GATES)), null),
  /** Why it failed or what the awaited decision is about. */
  reason: z._default(text(), null),
  /** A person's reason for rejecting the last plan: the next plan is made with it. */
  rejection: z._default(text(), null),
  integrationFixes: z._default(count, 0),
  integrationAccepted: z._default(flag, false),
  unblockedDespite: z._default(idList, []),
});
export type MilestoneState = z.infer<typeof milestoneStateSchema>;

export const overallSchema = z.strictObject({
  status: z._default(z.enum(OVERALL_STATUSES), 'pending'),
  baseBranch: z._default(text(), null),
  started: z._default(timestamp, null),
  completed: z._default(timestamp, null),
  awaiting: z._default(z.nullable(z.enum(OVERALL_GATES)), null),
  reason: z._default(text(), null),
  e2eFixes: z._default(count, 0),
});
export type OverallState = z.infer<typeof overallSchema>;

export const settingsSchema = z.strictObject({
  maxParallel: z._default(count.check(z.refine((n) => n >= 1, { error: 'expected at least 1' })), 2),
  guardMinimumSeconds: z._default(duration, 2 * 3600),
  guardFactor: z._default(factor, 3),
});

export interface LogEntry {
  /** The line without its "- " bullet. */
  text: string;
  line?: number;
}

export interface LongRunState {
  name: string;
  overall: OverallState;
  verification: { command: string | null; testSuite: string | null };
  agents: { planner: string | null; worker: string | null; reviewer: string | null };
  settings: z.infer<typeof settingsSchema>;
  milestones: MilestoneState[];
  log: LogEntry[];
}

/** Line numbers of what was parsed, for errors found later (a reference to a missing file). */
export interface StateLines {
  milestones: Map<string, Record<string, number>>;
}

const OVERALL_FIELDS = {
  'Overall Status': 'status',
  'Base Branch': 'baseBranch',
  Started: 'started',
  Completed: 'completed',
  Awaiting: 'awaiting',
  Reason: 'reason',
  'E2E Fixes': 'e2eFixes',
} as const;
const VERIFICATION_FIELDS = { Command: 'command', 'Test Suite': 'testSuite' } as const;
const AGENT_FIELDS = { Planner: 'planner', Worker: 'worker', Reviewer: 'reviewer' } as const;
const SETTING_FIELDS = {
  'Max Parallel Milestones': 'maxParallel',
  'Duration Guard': 'guardMinimumSeconds',
  'Duration Guard Factor': 'guardFactor',
} as const;
const MILESTONE_FIELDS = {
  Status: 'status',
  Attempts: 'attempts',
  Plan: 'plan',
  Review: 'review',
  Checkpoint: 'checkpoint',
  Started: 'started',
  Since: 'since',
  Completed: 'completed',
  Awaiting: 'awaiting',
  Reason: 'reason',
  Rejection: 'rejection',
  'Integration Fixes': 'integrationFixes',
  'Integration Accepted': 'integrationAccepted',
  'Unblocked Despite': 'unblockedDespite',
} as const;

const SECTIONS = ['Verification Strategy', 'Agents', 'Settings', 'Milestones', 'Execution Log'];

export function parseState(source: string, file: string): { state: LongRunState; lines: StateLines } {
  const doc = readDocument(source);
  const title = doc.title && /^Long Run:\s*(.+)$/i.exec(doc.title.text);
  if (!doc.title || !title)
    throw new LongRunFormatError(file, doc.title?.line, 'title', 'expected a first line "# Long Run: <session name>"');
  const lines: StateLines = { milestones: new Map() };

  const overall = validate(file, overallSchema, readFields(file, doc.preamble, OVERALL_FIELDS), OVERALL_FIELDS);
  const sections = new Map<string, Section>();
  const milestoneSections: Section[] = [];
  let inMilestones = false;
  for (const s of doc.sections) {
    if (s.level === 2) {
      const name = SECTIONS.find((n) => n.toLowerCase() === s.heading.toLowerCase());
      if (!name) throw new LongRunFormatError(file, s.line, s.heading, `unknown section; expected one of ${SECTIONS.join(', ')}`);
      if (sections.has(name))
        throw new LongRunFormatError(file, s.line, s.heading, `section given twice (also line ${sections.get(name)!.line})`);
      sections.set(name, s);
      inMilestones = name === 'Milestones';
      if (inMilestones) expectBlank(file, s);
    } else if (s.level === 3 && inMilestones) {
      milestoneSections.push(s);
    } else {
      throw new LongRunFormatError(file, s.line, s.heading, 'unexpected heading: milestones are "### M<N>" headings under "## Milestones"');
    }
  }
  const fieldsOf = <K extends string>(name: string, names: Record<string, K>) => {
    const s = sections.get(name);
    return s ? readFields(file, s.body, names) : {};
  };
  const verification = validate(
    file,
    z.strictObject({ command: z._default(text(), null), testSuite: z._default(text(), null) }),
    fieldsOf('Verification Strategy', VERIFICATION_FIELDS),
    VERIFICATION_FIELDS,
  );
  const agents = validate(
    file,
    z.strictObject({ planner: z._default(text(), null), worker: z._default(text(), null), reviewer: z._default(text(), null) }),
    fieldsOf('Agents', AGENT_FIELDS),
    AGENT_FIELDS,
  );
  const settings = validate(file, settingsSchema, fieldsOf('Settings', SETTING_FIELDS), SETTING_FIELDS);

  const milestones: MilestoneState[] = [];
  for (const s of milestoneSections) {
    const id = /^(\S+?)(?:\s*(?::|—|–|-)\s.*)?$/.exec(s.heading)?.[1] ?? s.heading;
    if (!MILESTONE_ID.test(id)) throw new LongRunFormatError(file, s.line, s.heading, 'expected "### M<N>" or "### M<N>: Name"');
    const fields = readFields(file, s.body, MILESTONE_FIELDS);
    if (!fields.status) throw new LongRunFormatError(file, s.line, `${id} Status`, 'missing "- Status: …"');
    const m = validate(file, milestoneStateSchema, { ...fields, id: { value: id, line: s.line } }, { ...MILESTONE_FIELDS, id: 'id' }, id);
    const prior = milestones.find((x) => x.id === id);
    if (prior) throw new LongRunFormatError(file, s.line, id, `milestone given twice (also line ${lines.milestones.get(id)!.id})`);
    lines.milestones.set(id, { id: s.line, ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, (v as FieldValue).line])) });
    milestones.push(m);
  }

  const log: LogEntry[] = [];
  for (const { line, text: t } of sections.get('Execution Log')?.body ?? []) {
    if (!t.trim()) continue;
    const m = /^[-*]\s+(.*)$/.exec(t.trim());
    if (!m) throw new LongRunFormatError(file, line, 'Execution Log', 'expected "- <time> <event>" lines');
    log.push({ text: m[1]!, line });
  }

  return { state: { name: title[1]!.trim(), overall, verification, agents, settings, milestones, log }, lines };
}

function expectBlank(file: string, s: Section): void {
  const stray = s.body.find((l) => l.text.trim());
  if (stray) throw new LongRunFormatError(file, stray.line, 'Milestones', 'expected "### M<N>" headings only under "## Milestones"');
}

/** Field values (strings, `(none)` as null) through a schema; the first problem names its line. */
function validate<T extends z.ZodMiniType>(
  file: string,
  schema: T,
  fields: Partial<Record<string, FieldValue>>,
  names: Record<string, string>,
  prefix?: string,
): z.infer<T> {
  const raw: Record<string, unknown> = {};
  for (const [key, f] of Object.entries(fields)) {
    if (!f) continue;
    const v = key === 'id' ? f.value : unquote(f.value);
    raw[key] = key === 'unblockedDespite' ? (v ? v.split(/\s*,\s*/).filter(Boolean) : []) : v;
    // A null in a field with a non-null default (a count, a status): leave it to the default.
    if (
      raw[key] === null &&
      [
        'attempts',
        'integrationFixes',
        'integrationAccepted',
        'e2eFixes',
        'status',
        'maxParallel',
        'guardMinimumSeconds',
        'guardFactor',
      ].includes(key)
    ) {
      delete raw[key];
    }
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data as z.infer<T>;
  const issue = parsed.error.issues[0]!;
  const key = String(issue.path[0] ?? '');
  const label = Object.entries(names).find(([, k]) => k === key)?.[0] ?? key;
  const got = fields[key]?.value;
  throw new LongRunFormatError(
    file,
    fields[key]?.line,
    prefix ? `${prefix} ${label}` : label,
    `${describeIssue(issue)}${got !== undefined ? ` (got "${got}")` : ''}`,
  );
}

/** The text of state.md. Fields at their defaults are still written where a person looks for them. */
export function formatState(s: LongRunState, names: Map<string, string> = new Map()): string {
  const v = (value: string | number | boolean | null | undefined) =>
    value === null || value === undefined || value === '' ? '(none)' : String(value);
  const code = (value: string | null) => (value ? quoteCode(value) : '(none)');
  const o = s.overall;
  const out = [
    `# Long Run: ${s.name}`,
    '',
    `- Overall Status: ${o.status}`,
    `- Base Branch: ${v(o.baseBranch)}`,
    `- Started: ${v(o.started)}`,
    `- Completed: ${v(o.completed)}`,
    ...(o.awaiting ? [`- Awaiting: ${o.awaiting}`] : []),
    ...(o.reason ? [`- Reason: ${oneLine(o.reason)}`] : []),
    ...(o.e2eFixes ? [`- E2E Fixes: ${o.e2eFixes}`] : []),
    '',
    '## Verification Strategy',
    `- Command: ${code(s.verification.command)}`,
    `- Test Suite: ${code(s.verification.testSuite)}`,
    '',
    '## Agents',
    `- Planner: ${code(s.agents.planner)}`,
    `- Worker: ${code(s.agents.worker)}`,
    `- Reviewer: ${code(s.agents.reviewer)}`,
    '',
    '## Settings',
    `- Max Parallel Milestones: ${s.settings.maxParallel}`,
    `- Duration Guard: ${formatDuration(s.settings.guardMinimumSeconds, true)}`,
    `- Duration Guard Factor: ${s.settings.guardFactor}`,
    '',
    '## Milestones',
    '',
  ];
  for (const m of [...s.milestones].sort((a, b) => compareMilestoneIds(a.id, b.id))) {
    const name = names.get(m.id);
    out.push(
      `### ${m.id}${name ? `: ${oneLine(name)}` : ''}`,
      `- Status: ${m.status}`,
      `- Attempts: ${m.attempts}`,
      `- Plan: ${v(m.plan)}`,
      `- Review: ${v(m.review)}`,
      `- Checkpoint: ${v(m.checkpoint)}`,
    );
    if (m.started) out.push(`- Started: ${m.started}`);
    if (m.since) out.push(`- Since: ${m.since}`);
    if (m.completed) out.push(`- Completed: ${m.completed}`);
    if (m.awaiting) out.push(`- Awaiting: ${m.awaiting}`);
    if (m.reason) out.push(`- Reason: ${oneLine(m.reason)}`);
    if (m.rejection) out.push(`- Rejection: ${oneLine(m.rejection)}`);
    if (m.integrationFixes) out.push(`- Integration Fixes: ${m.integrationFixes}`);
    if (m.integrationAccepted) out.push('- Integration Accepted: yes');
    if (m.unblockedDespite.length) out.push(`- Unblocked Despite: ${m.unblockedDespite.join(', ')}`);
    out.push('');
  }
  out.push('## Execution Log', '', ...s.log.map((e) => `- ${e.text}`), '');
  return out.join('\n');
}

/** A fresh milestone entry. */
export function newMilestoneState(id: string): MilestoneState {
  return milestoneStateSchema.parse({ id, status: 'pending' });
}

export function parseDuration(text: string): number {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text.trim());
  if (!m) return NaN;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** 5400 → "1h30m" (compact, for the file) or "1h 30m" (for people). */
export function formatDuration(seconds: number, compact = false): string {
  const s = Math.max(0, Math.round(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  // People are not told the seconds of hours; the file keeps every unit so it reads back the same.
  const parts = [h ? `${h}h` : '', m ? `${m}m` : '', sec && (compact || !h) ? `${sec}s` : ''].filter(Boolean);
  return parts.length ? parts.join(compact ? '' : ' ') : '0s';
}
