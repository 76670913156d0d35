// The small markdown dialect the long-run files are written in: headings, `- Field: value`
// bullets, `- item` lists and free text, with HTML comments ignored. Every piece keeps its line
// number, so a problem in a file a person edited is reported as file:line. Pure: no I/O.
import { InputError } from '../inputError';

/** A format problem in a long-run file: `file:line: field: problem`. */
export class LongRunFormatError extends InputError {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    override readonly field: string | undefined,
    readonly problem: string,
  ) {
    super(`${file}${line ? `:${line}` : ''}: ${field ? `${field}: ` : ''}${problem}`);
    this.name = 'LongRunFormatError';
  }
}

export interface SourceLine {
  line: number;
  text: string;
}

export interface Section {
  /** The heading's text without the hashes. */
  heading: string;
  level: number;
  line: number;
  /** Lines up to the next heading of any level; comments blanked, blank lines kept. */
  body: SourceLine[];
}

export interface Document {
  /** The first `# ` heading. */
  title: { text: string; line: number } | undefined;
  /** Lines before the first `## ` (or deeper) heading, after the title. */
  preamble: SourceLine[];
  sections: Section[];
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

/** `<!-- … -->` (also across lines) becomes spaces, keeping every line where it was. */
export function blankComments(text: string): string {
  return text.replace(/<!--[\s\S]*?(?:-->|$)/g, (c) => c.replace(/[^\n]/g, ' '));
}

export function readDocument(text: string): Document {
  const lines = blankComments(text.replace(/\r\n?/g, '\n')).split('\n');
  const doc: Document = { title: undefined, preamble: [], sections: [] };
  let current: SourceLine[] = doc.preamble;
  lines.forEach((raw, i) => {
    const line = i + 1;
    const m = HEADING.exec(raw);
    if (m && m[1]!.length === 1 && !doc.title && !doc.sections.length) {
      doc.title = { text: m[2]!, line };
      return;
    }
    if (m && m[1]!.length >= 2) {
      const section: Section = { heading: m[2]!, level: m[1]!.length, line, body: [] };
      doc.sections.push(section);
      current = section.body;
      return;
    }
    current.push({ line, text: raw });
  });
  return doc;
}

const FIELD = /^[-*]\s+([A-Za-z][A-Za-z0-9 ]*?)\s*:\s?(.*)$/;
const ITEM = /^[-*]\s+(.*)$/;

export interface FieldValue {
  value: string;
  line: number;
}

/**
 * `- Name: value` lines into a record keyed by `names[label]`. Blank lines are skipped;
 * anything else, an unknown label or a repeated one is an error naming its line.
 */
export function readFields<K extends string>(file: string, body: SourceLine[], names: Record<string, K>): Partial<Record<K, FieldValue>> {
  const byLabel = new Map(Object.entries(names).map(([label, key]) => [label.toLowerCase(), key]));
  const out: Partial<Record<K, FieldValue>> = {};
  for (const { line, text } of body) {
    if (!text.trim()) continue;
    const m = FIELD.exec(text.trim());
    if (!m) throw new LongRunFormatError(file, line, undefined, `expected "- Field: value", got "${clip(text.trim())}"`);
    const key = byLabel.get(m[1]!.toLowerCase());
    if (!key) throw new LongRunFormatError(file, line, m[1], `unknown field; expected one of ${Object.keys(names).join(', ')}`);
    if (out[key]) throw new LongRunFormatError(file, line, m[1], `given twice (also line ${out[key].line})`);
    out[key] = { value: m[2]!.trim(), line };
  }
  return out;
}

/** `- item` lines; a line that is neither blank nor an item is an error naming its line. */
export function readList(file: string, section: Section): FieldValue[] {
  const items: FieldValue[] = [];
  for (const { line, text } of section.body) {
    if (!text.trim()) continue;
    const m = ITEM.exec(text.trim());
    if (!m) throw new LongRunFormatError(file, line, section.heading, `expected a "- " list item, got "${clip(text.trim())}"`);
    items.push({ value: m[1]!.trim(), line });
  }
  return items;
}

/** Free text: the section's lines, trimmed at both ends, inner blank lines kept. */
export function readText(section: Section): string {
  return section.body
    .map((l) => l.text.trimEnd())
    .join('\n')
    .trim();
}

/** `` `cmd` `` → `cmd`; `(none)`, `none`, `-` and empty → null. */
export function unquote(value: string): string | null {
  const v = value.trim();
  if (v === '' || /^\(?none\)?$/i.test(v) || v === '-') return null;
  const m = /^(`+)([\s\S]*)\1$/.exec(v);
  return m ? m[2]!.trim() : v;
}

/** A command as written into a file: in backticks, with a longer fence if it holds backticks. */
export function quoteCode(value: string): string {
  const longest = Math.max(0, ...[...value.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return longest ? `${fence} ${value} ${fence}` : `${fence}${value}${fence}`;
}

export function clip(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One line of text: newlines and runs of spaces become single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
