// Loading a long run (state.md and every milestone file) and checking it as a whole: every
// milestone state.md names has a file, dependencies exist and form no cycle, and no milestone is
// in a state it cannot be in. state.md is then changed only through LongRunStore.update, which
// re-reads it, applies one change and writes it atomically (tmp + rename, the previous file kept
// as state.md.bak) before anything else happens.
import { copyFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { replaceFile } from '../atomicFile';
import { logTimestamp } from '../log/logLine';
import { LongRunFormatError, oneLine } from './markdown';
import { compareMilestoneIds, type Milestone, parseMilestone } from './milestoneFile';
import type { HarnessPaths } from './paths';
import { formatState, type LongRunState, type MilestoneState, newMilestoneState, parseState, type StateLines } from './stateFile';

export interface LongRun {
  paths: HarnessPaths;
  state: LongRunState;
  lines: StateLines;
  milestones: Map<string, Milestone>;
  /** Milestone files state.md did not list yet: added as pending by the next write. */
  added: string[];
}

/** Statuses in which a milestone has a plan it works from. */
const NEEDS_PLAN = new Set(['awaiting_approval', 'executing', 'validating', 'integrating']);
const NEEDS_ATTEMPT = new Set(['executing', 'validating', 'integrating']);

export function readMilestones(paths: HarnessPaths): Map<string, Milestone> {
  const out = new Map<string, Milestone>();
  let names: string[];
  try {
    names = readdirSync(paths.milestonesDir);
  } catch {
    throw new LongRunFormatError(
      `${paths.rel(paths.dir)}/milestones`,
      undefined,
      undefined,
      'no milestones/ folder in the harness directory',
    );
  }
  for (const name of names.filter((n) => /^M\d+.*\.md$/.test(n)).sort()) {
    const file = `${paths.rel(paths.milestonesDir)}/${name}`;
    const m = parseMilestone(readFileSync(join(paths.milestonesDir, name), 'utf8'), file);
    const prior = out.get(m.id);
    if (prior) throw new LongRunFormatError(file, 1, m.id, `milestone id used twice (also ${prior.file})`);
    out.set(m.id, m);
  }
  return out;
}

export function readStateFile(paths: HarnessPaths): ReturnType<typeof parseState> {
  let text: string;
  try {
    text = readFileSync(paths.state, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LongRunFormatError(
      paths.rel(paths.state),
      undefined,
      undefined,
      code === 'ENOENT' ? 'not found: create a harness with "launchpad milestones init NAME"' : `cannot be read (${code})`,
    );
  }
  return parseState(text, paths.rel(paths.state));
}

export function loadLongRun(paths: HarnessPaths): LongRun {
  const { state, lines } = readStateFile(paths);
  const milestones = readMilestones(paths);
  const stateFile = paths.rel(paths.state);
  const at = (id: string, field: string) => lines.milestones.get(id)?.[field] ?? lines.milestones.get(id)?.id;

  for (const m of state.milestones) {
    if (!milestones.has(m.id)) {
      throw new LongRunFormatError(stateFile, at(m.id, 'id'), m.id, `no milestone file with this id in ${paths.rel(paths.milestonesDir)}/`);
    }
  }
  const added = [...milestones.keys()].filter((id) => !state.milestones.some((m) => m.id === id)).sort(compareMilestoneIds);
  for (const id of added) state.milestones.push(newMilestoneState(id));

  for (const m of milestones.values()) {
    for (const d of m.dependencies) {
      if (!milestones.has(d))
        throw new LongRunFormatError(m.file, undefined, 'Dependencies', `${m.id} depends on ${d}, which has no milestone file`);
      if (d === m.id) throw new LongRunFormatError(m.file, undefined, 'Dependencies', `${m.id} depends on itself`);
    }
  }
  const cycle = findCycle(milestones);
  if (cycle)
    throw new LongRunFormatError(milestones.get(cycle[0]!)!.file, undefined, 'Dependencies', `dependency cycle: ${cycle.join(' → ')}`);

  const skippedInLog = new Map<string, number | undefined>();
  for (const e of state.log) {
    const m = /^\S+ \[(M\d+)\] skipped\b/.exec(e.text);
    if (m) skippedInLog.set(m[1]!, e.line);
  }
  const byId = new Map(state.milestones.map((m) => [m.id, m]));
  for (const m of state.milestones) {
    if (NEEDS_PLAN.has(m.status)) {
      if (!m.plan)
        throw new LongRunFormatError(stateFile, at(m.id, 'status'), `${m.id} Status`, `"${m.status}" without a plan file (Plan is empty)`);
      if (!existsSync(paths.abs(m.plan)))
        throw new LongRunFormatError(
          stateFile,
          at(m.id, 'plan'),
          `${m.id} Plan`,
          `"${m.status}" but the plan file ${m.plan} does not exist`,
        );
    }
    if (NEEDS_ATTEMPT.has(m.status) && m.attempts < 1) {
      throw new LongRunFormatError(
        stateFile,
        at(m.id, 'attempts'),
        `${m.id} Attempts`,
        `"${m.status}" needs Attempts of at least 1 (the plan was never run)`,
      );
    }
    if (m.status === 'completed' && (!m.checkpoint || !existsSync(paths.abs(m.checkpoint)))) {
      throw new LongRunFormatError(
        stateFile,
        at(m.id, 'checkpoint'),
        `${m.id} Checkpoint`,
        `"completed" without its checkpoint file${m.checkpoint ? ` (${m.checkpoint} does not exist)` : ''}`,
      );
    }
    if (skippedInLog.has(m.id) && m.status !== 'skipped') {
      throw new LongRunFormatError(
        stateFile,
        at(m.id, 'status'),
        `${m.id} Status`,
        `"${m.status}", but the execution log (line ${skippedInLog.get(m.id)}) records that it was skipped; a skipped milestone cannot be un-skipped: add a new milestone with the same goal instead`,
      );
    }
    if (m.awaiting === 'integration' && m.status !== 'integrating') {
      throw new LongRunFormatError(
        stateFile,
        at(m.id, 'awaiting'),
        `${m.id} Awaiting`,
        `an integration decision is only awaited while "integrating" (status is "${m.status}")`,
      );
    }
    if (m.awaiting === 'duration' && m.status !== 'planning' && m.status !== 'executing') {
      throw new LongRunFormatError(
        stateFile,
        at(m.id, 'awaiting'),
        `${m.id} Awaiting`,
        `a duration decision is only awaited while "planning" or "executing" (status is "${m.status}")`,
      );
    }
    for (const d of m.unblockedDespite) {
      if (!milestones.get(m.id)!.dependencies.includes(d)) {
        throw new LongRunFormatError(
          stateFile,
          at(m.id, 'unblockedDespite'),
          `${m.id} Unblocked Despite`,
          `${d} is not one of ${m.id}'s dependencies`,
        );
      }
      const dependency = byId.get(d)?.status;
      if (dependency !== 'skipped' && dependency !== 'failed') {
        throw new LongRunFormatError(
          stateFile,
          at(m.id, 'unblockedDespite'),
          `${m.id} Unblocked Despite`,
          `${d} is "${dependency}", not skipped or failed`,
        );
      }
    }
  }
  return { paths, state, lines, milestones, added };
}

/** The first cycle found, as a path of ids ending where it started. */
export function findCycle(milestones: Map<string, Pick<Milestone, 'id' | 'dependencies'>>): string[] | undefined {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (id: string, path: string[]): string[] | undefined => {
    if (state.get(id) === 'done') return undefined;
    if (state.get(id) === 'visiting') return [...path.slice(path.indexOf(id)), id];
    state.set(id, 'visiting');
    for (const d of milestones.get(id)?.dependencies ?? []) {
      const c = visit(d, [...path, id]);
      if (c) return c;
    }
    state.set(id, 'done');
    return undefined;
  };
  for (const id of [...milestones.keys()].sort(compareMilestoneIds)) {
    const c = visit(id, []);
    if (c) return c;
  }
  return undefined;
}

/** Dependencies first, lower numbers first among equals. */
export function topologicalOrder(milestones: Map<string, Pick<Milestone, 'id' | 'dependencies'>>): string[] {
  const order: string[] = [];
  const done = new Set<string>();
  const visit = (id: string) => {
    if (done.has(id)) return;
    done.add(id);
    for (const d of [...(milestones.get(id)?.dependencies ?? [])].sort(compareMilestoneIds)) visit(d);
    order.push(id);
  };
  for (const id of [...milestones.keys()].sort(compareMilestoneIds)) visit(id);
  return order;
}

/** An execution log line: `<time> [M<N>] <event>` (the id only when it is about one milestone). */
export function logEntry(event: string, id?: string): { text: string } {
  return { text: `${logTimestamp()} ${id ? `[${id}] ` : ''}${oneLine(event)}` };
}

export class LongRunStore {
  private names = new Map<string, string>();

  constructor(readonly paths: HarnessPaths) {}

  /** Reads and checks everything; new milestone files are added to state.md as pending. */
  load(): LongRun {
    const run = loadLongRun(this.paths);
    this.names = new Map([...run.milestones.values()].map((m) => [m.id, m.name]));
    if (run.added.length) {
      this.update((s) => {
        for (const id of run.added) {
          if (!s.milestones.some((m) => m.id === id)) s.milestones.push(newMilestoneState(id));
          s.log.push(logEntry(`milestone file found; added as pending`, id));
        }
      });
      run.added = [];
    }
    return run;
  }

  /** state.md as it is now (format checked, cross-file checks not repeated). */
  read(): LongRunState {
    return readStateFile(this.paths).state;
  }

  /**
   * One change to state.md: read, mutate, write atomically. Synchronous, so two changes from
   * this process never interleave; other processes are kept out by the run lock.
   */
  update<T>(mutate: (state: LongRunState) => T): T {
    const state = this.read();
    const result = mutate(state);
    writeAtomically(this.paths.state, formatState(state, this.names), true);
    return result;
  }

  /** One milestone's entry changed and a log line, in one write. */
  updateMilestone<T>(id: string, mutate: (m: MilestoneState, state: LongRunState) => T, event?: string): T {
    return this.update((s) => {
      const m = s.milestones.find((x) => x.id === id);
      if (!m) throw new Error(`${id} is not in state.md`);
      const result = mutate(m, s);
      if (event) s.log.push(logEntry(event, id));
      return result;
    });
  }

  log(event: string, id?: string): void {
    this.update((s) => void s.log.push(logEntry(event, id)));
  }

  setName(id: string, name: string): void {
    this.names.set(id, name);
  }
}

/**
 * New text → .tmp (flushed), then renamed over: a reader never sees half a file. With `backup`,
 * the current file is first copied to .bak.
 */
export function writeAtomically(path: string, text: string, backup = false): void {
  if (backup && existsSync(path)) copyFileSync(path, `${path}.bak`);
  replaceFile(path, text);
}
