// milestones/M<N>-<slug>.md: one milestone of a long run, written by a person (or by
// `launchpad milestones correct add`). The format is described in docs/milestones.md.
import * as z from 'zod/mini';

import { type FieldValue, LongRunFormatError, readDocument, readList, readText, type Section, unquote } from './markdown';
import { describeIssue } from './zodIssues';

export const MILESTONE_ID = /^M[1-9]\d{0,3}$/;

export interface InterfaceContract {
  /** A file of the repository, relative to its top. */
  file: string;
  /** Text the file must contain while the contract holds (a signature, a type, a route). */
  signature: string;
}

const idSchema = z.string().check(z.regex(MILESTONE_ID, { error: 'expected a milestone id: M followed by a number (M1, M2, …)' }));
const nonEmpty = (what: string) => z.string().check(z.minLength(1, { error: `${what} is empty` }));
const scopePath = z.string().check(
  z.refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), {
    error: 'a scope entry is a path inside the repository (no leading "/", no "..")',
  }),
);

export const milestoneSchema = z.strictObject({
  id: idSchema,
  name: nonEmpty('the name'),
  goal: nonEmpty('the goal'),
  scope: z.array(scopePath).check(z.minLength(1, { error: 'list at least one file or folder the milestone may change' })),
  criteria: z.array(nonEmpty('a criterion')).check(z.minLength(1, { error: 'list at least one success criterion' })),
  dependencies: z.array(idSchema),
  interfaces: z.array(z.strictObject({ file: nonEmpty('the file'), signature: nonEmpty('the signature') })),
});

export type Milestone = z.infer<typeof milestoneSchema> & {
  /** The file it was read from, relative to the harness directory (for messages). */
  file: string;
};

const SECTIONS = {
  goal: 'Goal',
  scope: 'Scope',
  criteria: 'Success Criteria',
  dependencies: 'Dependencies',
  interfaces: 'Interfaces',
} as const;
const REQUIRED: Array<keyof typeof SECTIONS> = ['goal', 'scope', 'criteria', 'dependencies'];

const TITLE = /^(M\d+)\s*(?::|—|–|-)\s*(.+)$/;

/** Parses one milestone file; `file` names it in errors. */
export function parseMilestone(text: string, file: string): Milestone {
  const doc = readDocument(text);
  if (!doc.title) throw new LongRunFormatError(file, undefined, undefined, 'no "# M<N>: Name" title line');
  const t = TITLE.exec(doc.title.text);
  if (!t) throw new LongRunFormatError(file, doc.title.line, 'title', `expected "# M<N>: Name", got "# ${doc.title.text}"`);

  const found = new Map<keyof typeof SECTIONS, Section>();
  for (const s of doc.sections.filter((x) => x.level === 2)) {
    const key = (Object.keys(SECTIONS) as Array<keyof typeof SECTIONS>).find((k) => SECTIONS[k].toLowerCase() === s.heading.toLowerCase());
    if (!key) continue; // other sections are notes for people
    if (found.has(key)) throw new LongRunFormatError(file, s.line, s.heading, `section given twice (also line ${found.get(key)!.line})`);
    found.set(key, s);
  }
  for (const key of REQUIRED) {
    if (!found.has(key)) throw new LongRunFormatError(file, undefined, SECTIONS[key], `missing "## ${SECTIONS[key]}" section`);
  }

  const lines: Record<string, number> = { id: doc.title.line, name: doc.title.line };
  /** The line of each list item, so a bad item is reported where it is. */
  const itemLines: Record<string, number[]> = {};
  const list = (key: keyof typeof SECTIONS): FieldValue[] => {
    const s = found.get(key);
    if (!s) return [];
    lines[key] = s.line;
    const items = readList(file, s)
      .map((i) => ({ ...i, value: unquote(i.value) ?? '' }))
      .filter((i) => i.value !== '');
    itemLines[key] = items.map((i) => i.line);
    return items;
  };
  const goalSection = found.get('goal')!;
  lines.goal = goalSection.line;
  const interfaces = list('interfaces').map((i) => {
    const m = /^`?([^`:]+?)`?\s*:\s*(.+)$/.exec(i.value);
    if (!m) throw new LongRunFormatError(file, i.line, 'Interfaces', `expected "- path: signature", got "${i.value}"`);
    return { file: m[1]!.trim(), signature: unquote(m[2]!) ?? '' };
  });
  const raw = {
    id: t[1]!,
    name: t[2]!.trim(),
    goal: readText(goalSection),
    scope: list('scope').map((i) => i.value),
    criteria: list('criteria').map((i) => i.value.replace(/^\[[ xX]\]\s*/, '')),
    dependencies: list('dependencies').map((i) => i.value),
    interfaces,
  };
  const parsed = milestoneSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    const label = key in SECTIONS ? SECTIONS[key as keyof typeof SECTIONS] : key;
    const index = issue.path[1];
    throw new LongRunFormatError(
      file,
      (typeof index === 'number' ? itemLines[key]?.[index] : undefined) ?? lines[key],
      label,
      describeIssue(issue),
    );
  }
  return { ...parsed.data, file };
}

/** The text of a milestone file; parseMilestone reads it back to the same milestone. */
export function formatMilestone(m: Omit<Milestone, 'file'>): string {
  const list = (items: string[]) => (items.length ? items.map((i) => `- ${i}`).join('\n') : '- (none)');
  return [
    `# ${m.id}: ${m.name}`,
    '',
    '## Goal',
    m.goal.trim(),
    '',
    '## Scope',
    list(m.scope),
    '',
    '## Success Criteria',
    list(m.criteria),
    '',
    '## Dependencies',
    list(m.dependencies),
    '',
    ...(m.interfaces.length ? ['## Interfaces', list(m.interfaces.map((i) => `${i.file}: ${i.signature}`)), ''] : []),
  ].join('\n');
}

/** `M3` → 3, for ordering. */
export function milestoneNumber(id: string): number {
  return Number(id.slice(1));
}

export function compareMilestoneIds(a: string, b: string): number {
  return milestoneNumber(a) - milestoneNumber(b);
}
