// The journal: .agent-os/progress/progress.json is the source of truth, progress.md is
// regenerated from it. An append is one read-modify-write under the journal lock: read, validate
// the entry, append, update the metadata, write a temp file, rename it over, regenerate the
// Markdown. A progress.json that cannot be read is never overwritten.
import { readFileSync } from 'node:fs';

import { replaceFile } from '../atomicFile';
import { InputError } from '../inputError';
import { logTimestamp } from '../log/logLine';
import { archiveOldEntries } from './archive';
import { withJournalLock } from './atomicFile';
import { ENTRY_FIELDS, ENTRY_TYPES, entryProblem, type FieldName, isEntryType, type JournalEntry, type NewEntry } from './entrySchema';
import { emptyJournal, type JournalDoc, metadataOf, parseJournal, serializeJournalFile } from './journalFile';
import { renderJournalMarkdown } from './journalMarkdown';
import { JOURNAL_FILE, type JournalPaths } from './journalPaths';

/** An entry refused before anything was written: names the field. */
export class JournalEntryError extends InputError {
  constructor(
    readonly type: string,
    override readonly field: string,
    problem: string,
  ) {
    super(`journal entry ${type}: ${field}: ${problem}`);
    this.name = 'JournalEntryError';
  }
}

export class Journal {
  constructor(
    readonly paths: JournalPaths,
    /** Names the holder of the journal lock. */
    private readonly command = 'launchpad journal',
  ) {}

  /** The journal as on disk (empty when there is none yet); throws JournalFileError when it cannot be read. */
  read(): JournalDoc {
    let text: string;
    try {
      text = readFileSync(this.paths.json, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyJournal();
      throw err;
    }
    return parseJournal(text, JOURNAL_FILE);
  }

  /** The last `n` entries, oldest first. */
  recent(n: number): JournalEntry[] {
    return n > 0 ? this.read().entries.slice(-n) : [];
  }

  async append(input: NewEntry, now = new Date()): Promise<JournalEntry> {
    return withJournalLock(this.paths, this.command, () => {
      const doc = this.read();
      const entry = buildEntry(input, now, new Set(doc.entries.map((e) => e.id)));
      doc.entries.push(entry);
      archiveOldEntries(this.paths, doc, now);
      doc.metadata = metadataOf(doc.entries, logTimestamp(now));
      replaceFile(this.paths.json, serializeJournalFile(doc));
      replaceFile(this.paths.markdown, renderJournalMarkdown(doc.entries));
      return entry;
    });
  }
}

/** The stored entry: id, timestamp, type first, then the given fields (empty ones dropped); validated. */
export function buildEntry(input: NewEntry, now: Date, takenIds: ReadonlySet<string>): JournalEntry {
  const type = input.type;
  if (!isEntryType(type)) throw new JournalEntryError(String(type), 'type', `expected one of ${Object.keys(ENTRY_TYPES).join(', ')}`);
  const timestamp = input.timestamp ?? logTimestamp(now);
  const raw: Record<string, unknown> = { id: entryId(timestamp, takenIds), timestamp, type };
  for (const [k, v] of Object.entries(input)) {
    if (k === 'type' || k === 'timestamp' || v === undefined || v === null) continue;
    if (!Object.prototype.hasOwnProperty.call(ENTRY_FIELDS, k)) throw new JournalEntryError(type, k, 'not a journal field');
    const fields: readonly FieldName[] = [...ENTRY_TYPES[type].required, ...ENTRY_TYPES[type].optional];
    if (!fields.includes(k as FieldName)) throw new JournalEntryError(type, k, `not a field of ${type} (its fields: ${fields.join(', ')})`);
    raw[k] = v;
  }
  const problem = entryProblem(raw);
  if (problem) throw new JournalEntryError(type, problem.field, problem.message);
  return raw as JournalEntry;
}

/** `entry-YYYYMMDD-HHMMSS` of the timestamp (UTC), with `-2`, `-3` … when the second is taken. */
export function entryId(timestamp: string, taken: ReadonlySet<string>): string {
  const base = `entry-${timestamp.slice(0, 10).replace(/-/g, '')}-${timestamp.slice(11, 19).replace(/:/g, '')}`;
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
