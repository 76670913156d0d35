// Archiving: when progress.json holds more than MAX_ENTRIES entries, those older than
// ARCHIVE_AGE_DAYS move to archive/YYYY-MM.json (by the month of their timestamp), merged with
// what the month's file already holds. Entries are matched by id, so archiving again after a
// crash between the archive write and the progress.json write duplicates nothing.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

import { replaceFile } from '../atomicFile';
import type { JournalEntry } from './entrySchema';
import { type ArchiveDoc, JOURNAL_VERSION, type JournalDoc, parseArchive, serializeJournalFile } from './journalFile';
import type { JournalPaths } from './journalPaths';

export const MAX_ENTRIES = 500;
export const ARCHIVE_AGE_DAYS = 30;

/** Moves old entries out of `doc` (in place) into their archive files; returns how many moved. */
export function archiveOldEntries(paths: JournalPaths, doc: JournalDoc, now: Date): number {
  if (doc.entries.length <= MAX_ENTRIES) return 0;
  const cutoff = new Date(now.getTime() - ARCHIVE_AGE_DAYS * 86_400_000).toISOString();
  const old = doc.entries.filter((e) => e.timestamp < cutoff);
  if (!old.length) return 0;
  const byMonth = new Map<string, JournalEntry[]>();
  for (const e of old) {
    const month = e.timestamp.slice(0, 7);
    byMonth.set(month, [...(byMonth.get(month) ?? []), e]);
  }
  // Every archive file is read (and so checked) before any is written.
  const merged = [...byMonth].map(([month, entries]) => {
    const archive = readArchive(paths, month);
    const have = new Set(archive.entries.map((e) => e.id));
    archive.entries.push(...entries.filter((e) => !have.has(e.id)));
    archive.entries.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    return archive;
  });
  for (const archive of merged) replaceFile(paths.archiveFile(archive.month), serializeJournalFile(archive));
  const moved = new Set(old.map((e) => e.id));
  doc.entries = doc.entries.filter((e) => !moved.has(e.id));
  return old.length;
}

export function readArchive(paths: JournalPaths, month: string): ArchiveDoc {
  const file = paths.archiveFile(month);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: JOURNAL_VERSION, month, entries: [] };
    throw err;
  }
  return parseArchive(text, relative(paths.root, file));
}
