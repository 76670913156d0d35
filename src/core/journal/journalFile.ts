// progress.json (and an archive month) as text: parse with errors naming the file, the line and
// column of a JSON syntax error or the field of a bad entry; serialize with stable formatting.
// Pure: no I/O.
import { InputError } from '../inputError';
import { locateJsonSyntaxError } from '../taskFile/jsonSyntax';
import { entryProblem, type JournalEntry } from './entrySchema';

export const JOURNAL_VERSION = '1.0';

export interface JournalMetadata {
  /** Entries in progress.json (archived ones are not counted). */
  total_entries: number;
  /** Timestamp of the oldest entry in progress.json; null when there is none. */
  oldest_entry: string | null;
  last_updated: string | null;
}

export interface JournalDoc {
  version: string;
  entries: JournalEntry[];
  metadata: JournalMetadata;
  [extra: string]: unknown;
}

export interface ArchiveDoc {
  version: string;
  /** YYYY-MM: every entry's timestamp is in this month. */
  month: string;
  entries: JournalEntry[];
  [extra: string]: unknown;
}

/** A journal file that cannot be read as one: never overwritten; the CLI exits 2 with this message. */
export class JournalFileError extends InputError {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'JournalFileError';
  }
}

export function emptyJournal(): JournalDoc {
  return { version: JOURNAL_VERSION, entries: [], metadata: { total_entries: 0, oldest_entry: null, last_updated: null } };
}

export function parseJournal(text: string, label: string): JournalDoc {
  const raw = parseObject(text, label);
  const entries = parseEntries(raw, label);
  const m = raw.metadata;
  if (m !== undefined && (m === null || typeof m !== 'object' || Array.isArray(m)))
    throw new JournalFileError(label, 'metadata: expected an object');
  return {
    ...raw,
    version: raw.version as string,
    entries,
    metadata: metadataOf(entries, (m as JournalMetadata | undefined)?.last_updated ?? null),
  };
}

export function parseArchive(text: string, label: string): ArchiveDoc {
  const raw = parseObject(text, label);
  if (typeof raw.month !== 'string' || !/^\d{4}-\d\d$/.test(raw.month)) throw new JournalFileError(label, 'month: expected YYYY-MM');
  return { ...raw, version: raw.version as string, month: raw.month, entries: parseEntries(raw, label) };
}

/** The metadata block as it follows from the entries. */
export function metadataOf(entries: readonly JournalEntry[], lastUpdated: string | null): JournalMetadata {
  let oldest: string | null = null;
  for (const e of entries) if (oldest === null || e.timestamp < oldest) oldest = e.timestamp;
  return { total_entries: entries.length, oldest_entry: oldest, last_updated: lastUpdated };
}

/** Two-space JSON with a final newline. */
export function serializeJournalFile(doc: JournalDoc | ArchiveDoc): string {
  return JSON.stringify(doc, null, 2) + '\n';
}

function parseObject(text: string, label: string): Record<string, unknown> {
  if (text.charCodeAt(0) === 0xfeff)
    throw new JournalFileError(label, 'starts with a byte-order mark (BOM); save it as UTF-8 without a BOM');
  if (text.trim() === '') throw new JournalFileError(label, 'file is empty; expected a JSON object with "version" and "entries"');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    const where = locateJsonSyntaxError(text);
    throw new JournalFileError(
      label,
      where
        ? `invalid JSON at line ${where.line}, column ${where.column}: ${where.message}`
        : `cannot be read as JSON: ${(err as Error).message}`,
    );
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new JournalFileError(label, '(root): expected a JSON object');
  const obj = raw as Record<string, unknown>;
  if (obj.version !== JOURNAL_VERSION)
    throw new JournalFileError(label, `version: expected "${JOURNAL_VERSION}", got ${JSON.stringify(obj.version) ?? 'nothing'}`);
  return obj;
}

function parseEntries(raw: Record<string, unknown>, label: string): JournalEntry[] {
  if (!Array.isArray(raw.entries))
    throw new JournalFileError(label, `entries: expected an array${raw.entries === undefined ? ' (required field is missing)' : ''}`);
  const seen = new Map<string, number>();
  raw.entries.forEach((entry, i) => {
    const problem = entryProblem(entry);
    if (problem) throw new JournalFileError(label, `entries[${i}].${problem.field}: ${problem.message}`);
    const id = (entry as JournalEntry).id;
    const first = seen.get(id);
    if (first !== undefined) throw new JournalFileError(label, `entries[${i}].id: duplicate id "${id}" (also entries[${first}].id)`);
    seen.set(id, i);
  });
  return raw.entries as JournalEntry[];
}
