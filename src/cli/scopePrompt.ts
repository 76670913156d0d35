// The scope gate and the spec import on the command line, shared by `start` and `run --spec`:
// asking on a terminal, saying what was kept when nobody can be asked.
import { initStateFiles } from '../core/init';
import { Journal } from '../core/journal/journal';
import { JournalPaths } from '../core/journal/journalPaths';
import { SCOPE_OPTIONS, type ScopeChoice, type ScopeDecision, scopeGate } from '../core/journal/scopeGate';
import { syncSpec } from '../core/specTasks/specFiles';
import { commitOwnWrites } from '../core/specTasks/specGit';
import { importSpecTasks, unfinishedParents } from '../core/specTasks/specImport';
import { StatePaths } from '../core/statePaths';
import { StateStore } from '../core/taskFile/store';
import { type CommandContext, type OptionSpec, splitList } from './command';
import { UsageError } from './exit';
import { type Io, stderrLogger } from './io';

/** Asks on a terminal: 1 (or Enter) single, 2 all; undefined when nobody can be asked. */
export function terminalScopeAsker(io: Io, canAsk: boolean): ((warning: string, question: string) => Promise<ScopeChoice>) | undefined {
  if (!canAsk || !io.interactive || !io.ask) return undefined;
  const ask = io.ask;
  return async (warning, question) => {
    io.out(`\n${warning}\n\n`);
    const menu = SCOPE_OPTIONS.map((o, i) => `  ${i + 1}. ${o.label}`).join('\n');
    for (let tries = 0; tries < 3; tries++) {
      const a = (await ask(`${question}\n${menu}\nchoice [1]: `)).trim().toLowerCase();
      if (a === '' || a === '1' || a === 'single') return 'single';
      if (a === '2' || a === 'all') return 'all';
    }
    return 'single';
  };
}

/** The line that says what the gate did when it could not ask, or undefined. */
export function scopeNotice(decision: ScopeDecision, requested: number): string | undefined {
  if (decision.via === 'non-interactive')
    return `not asked (no terminal): keeping Task ${decision.tasks[0]} only; pass --all to work on all ${requested} tasks (logged as a scope override)`;
  if (decision.via === 'all-flag') return `--all: working on all ${requested} tasks; logged as a scope override (${decision.override?.id})`;
  if (decision.override) return `working on all ${requested} tasks; logged as a scope override (${decision.override.id})`;
  return undefined;
}

export const SPEC_RUN_OPTIONS: Record<string, OptionSpec> = {
  spec: {
    type: 'string',
    value: 'NAME',
    help: 'first import the subtasks of .agent-os/tasks/NAME/tasks.md as tasks (see docs/journal.md)',
  },
  task: {
    type: 'string',
    value: 'IDS',
    help: 'with --spec: the parent tasks to work on (default: the unfinished ones; more than one asks first)',
  },
  all: { type: 'boolean', help: 'with --spec: work on every parent task asked for without asking (logged as a scope override)' },
};

/**
 * `run --spec NAME`: sync the spec, pass the scope gate, import the chosen parents' subtasks
 * into harness-tasks.json. Returns the spec name for the journal, or undefined without --spec.
 */
export async function prepareSpecRun(ctx: CommandContext, paths: StatePaths, quiet: boolean): Promise<string | undefined> {
  const { io, values } = ctx;
  const spec = values.spec as string | undefined;
  if (spec === undefined) {
    if (values.task !== undefined || values.all) throw new UsageError('run: --task and --all go with --spec NAME');
    return undefined;
  }
  const say = (text: string) => (quiet ? io.err(text) : io.out(text));
  const jpaths = new JournalPaths(paths);
  const state = await syncSpec(jpaths, spec, 'launchpad run');
  if (state.changed)
    await commitOwnWrites(paths.root, [jpaths.specTasksJson(spec)], `Launchpad: sync tasks.json of spec ${spec}`, stderrLogger(io));
  const asked = splitList(values.task);
  const parents = asked?.length
    ? [...new Set(asked.map((id) => state.md.find((t) => t.id === id.replace(/\.$/, ''))?.parent ?? id.replace(/\.$/, '')))]
    : unfinishedParents(state.md).map((t) => t.id);
  const decision = await scopeGate({
    requested: parents,
    ask: terminalScopeAsker(io, !quiet),
    all: values.all === true,
    journal: new Journal(jpaths, 'launchpad run'),
    spec,
  });
  if (decision.warning && decision.via !== 'asked') say(`${decision.warning}\n`);
  const notice = scopeNotice(decision, parents.length);
  if (notice) say(`${notice}\n`);
  if (decision.cancelled) throw new UsageError('run: no parent task chosen');
  const store = new StateStore(paths, 'launchpad run');
  if (!store.exists()) await initStateFiles(paths);
  const result = await importSpecTasks(store, spec, state.md, decision.tasks);
  say(
    decision.tasks.length
      ? `spec ${spec}: parent task${decision.tasks.length > 1 ? 's' : ''} ${decision.tasks.join(', ')}: ${result.imported.length} subtask(s) in harness-tasks.json\n`
      : `spec ${spec}: every task is done\n`,
  );
  if (result.withoutValidation.length) {
    io.err(
      `note: no validation command for subtask(s) ${result.withoutValidation.join(', ')}: add "- validate: <cmd>" under them or set session_config.default_validation_command; a run will not start them\n`,
    );
  }
  return spec;
}
