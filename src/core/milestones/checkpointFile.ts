// <harness>/checkpoints/M<N>-checkpoint.md: what a completed milestone left behind. Written once
// when the milestone is integrated, never changed after. The next milestones' planners are told
// only three of its sections (Files Changed, Interfaces, Success Criteria Verified).
import { readDocument, readList, readText, unquote } from './markdown';
import { formatDuration } from './stateFile';

export interface FileChange {
  /** git's letter: A added, M modified, D deleted, R renamed, … */
  status: string;
  path: string;
}

export interface Checkpoint {
  id: string;
  name: string;
  completed: Date;
  durationSeconds: number;
  attempts: number;
  plan: string;
  review: string;
  testResults: string;
  filesChanged: FileChange[];
  stateAfter: string;
  interfaces: string[];
  criteria: string[];
  /** The merge commit on the base branch. */
  mergeCommit?: string;
}

const CHANGE_WORDS: Record<string, string> = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed' };

export function formatCheckpoint(c: Checkpoint): string {
  const list = (items: string[]) => (items.length ? items.map((i) => `- ${i}`).join('\n') : '- (none)');
  return [
    `# Checkpoint: ${c.id} — ${c.name}`,
    '',
    `**Completed:** ${formatMinute(c.completed)}`,
    `**Duration:** ${formatDuration(c.durationSeconds)}`,
    `**Attempts:** ${c.attempts}`,
    ...(c.mergeCommit ? [`**Merge Commit:** ${c.mergeCommit}`] : []),
    '',
    '## Plan File',
    `\`${c.plan}\``,
    '',
    '## Review File',
    `\`${c.review}\``,
    '',
    '## Test Results',
    c.testResults.trim() || '(no verification command configured)',
    '',
    '## Files Changed',
    list(c.filesChanged.map((f) => `${f.path} (${CHANGE_WORDS[f.status[0]!] ?? f.status})`)),
    '',
    '## State After Milestone',
    c.stateAfter.trim(),
    '',
    '## Interfaces',
    list(c.interfaces),
    '',
    '## Success Criteria Verified',
    list(c.criteria),
    '',
  ].join('\n');
}

/** What a later milestone's Context Brief may carry from this checkpoint, and nothing else. */
export interface CheckpointContext {
  filesChanged: string[];
  interfaces: string[];
  criteria: string[];
}

export function readCheckpointContext(text: string, file: string): CheckpointContext {
  const doc = readDocument(text);
  const section = (name: string) => doc.sections.find((s) => s.heading.toLowerCase() === name.toLowerCase());
  const items = (name: string) => {
    const s = section(name);
    if (!s) return [];
    return readList(file, s)
      .map((i) => unquote(i.value))
      .filter((v): v is string => !!v);
  };
  return { filesChanged: items('Files Changed'), interfaces: items('Interfaces'), criteria: items('Success Criteria Verified') };
}

/** A checkpoint's "State After Milestone" text, for the completion summary. */
export function readStateAfter(text: string): string {
  const s = readDocument(text).sections.find((x) => x.heading.toLowerCase() === 'state after milestone');
  return s ? readText(s) : '';
}

/** YYYY-MM-DD HH:MM in UTC. */
export function formatMinute(d: Date): string {
  return d.toISOString().slice(0, 16).replace('T', ' ');
}

export function formatDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}
