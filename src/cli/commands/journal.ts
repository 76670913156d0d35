import { ENTRY_FIELDS, ENTRY_TYPE_NAMES, ENTRY_TYPES, type FieldName, isEntryType, type NewEntry } from '../../core/journal/entrySchema';
import { Journal } from '../../core/journal/journal';
import { renderJournalMarkdown } from '../../core/journal/journalMarkdown';
import { findProjectRoot, JournalPaths } from '../../core/journal/journalPaths';
import { StatePaths } from '../../core/statePaths';
import { type Command, numberOption, type OptionSpec, splitList } from '../command';
import { EXIT, UsageError } from '../exit';

const flag = (field: string) => field.replace(/_/g, '-');

/** One flag per journal field: --task-id, --next-steps (repeatable), … */
const FIELD_OPTIONS: Record<string, OptionSpec> = Object.fromEntries(
  Object.entries(ENTRY_FIELDS).map(([name, f]) => [
    flag(name),
    f.kind === 'list' && name === 'next_steps'
      ? { type: 'string', multiple: true, value: 'TEXT', help: f.help }
      : { type: 'string', value: f.kind === 'text' ? 'TEXT' : f.kind === 'list' ? 'A,B' : 'N', help: f.help },
  ]),
);

export const journalCommand: Command = {
  name: 'journal',
  usage: 'launchpad journal [--json] [--last N] | launchpad journal add TYPE --field value …',
  summary: 'Print the progress journal (.agent-os/progress/), or add an entry to it.',
  details: [
    'The journal is what a person and an agent read at the start of a session. The controller writes',
    'session_started, task_completed, task_blocked and session_ended; people add the others. Entry types and',
    'their required fields (flags are the field names with "-"):',
    ...ENTRY_TYPE_NAMES.map(
      (t) =>
        `  ${t.padEnd(15)} ${ENTRY_TYPES[t].required.join(', ')}${ENTRY_TYPES[t].optional.length ? `  [optional: ${ENTRY_TYPES[t].optional.join(', ')}]` : ''}`,
    ),
    'e.g. launchpad journal add debug_resolved --issue "JWKS endpoint missing" --resolution "added JWKS_URI"',
  ].join('\n'),
  options: {
    json: { type: 'boolean', help: 'print the entries (and the metadata) as JSON' },
    last: { type: 'string', value: 'N', help: 'only the last N entries' },
    ...FIELD_OPTIONS,
  },
  positionals: { min: 0, max: 2 },
  async run(ctx) {
    const { io, values, positionals } = ctx;
    const root = findProjectRoot(io.cwd, ctx.dir, io.env);
    if (!root)
      throw new UsageError(
        `not in a project: no harness-tasks.json or .agent-os/ in ${io.cwd} or any parent directory; run "launchpad init" first, or pass --dir`,
      );
    const journal = new Journal(new JournalPaths(new StatePaths(root)), 'launchpad journal');
    const given = Object.keys(ENTRY_FIELDS).filter((f) => values[flag(f)] !== undefined) as FieldName[];

    if (positionals.length === 0) {
      if (given.length) throw new UsageError(`journal: --${flag(given[0]!)} goes with "journal add TYPE"`);
      const last = numberOption('last', values.last, { integer: true, min: 1 });
      const doc = journal.read();
      const entries = last === undefined ? doc.entries : doc.entries.slice(-last);
      io.out(values.json ? JSON.stringify({ entries, metadata: doc.metadata }, null, 2) + '\n' : renderJournalMarkdown(entries));
      return EXIT.OK;
    }
    if (positionals[0] !== 'add') throw new UsageError(`journal: unknown subcommand "${positionals[0]}"\nusage: ${journalCommand.usage}`);
    const type = positionals[1];
    if (!isEntryType(type))
      throw new UsageError(
        `journal add: expected an entry type (${ENTRY_TYPE_NAMES.join(', ')}), got ${type === undefined ? 'none' : `"${type}"`}`,
      );
    if (values.json || values.last !== undefined) throw new UsageError('journal add: --json and --last are for printing the journal');
    const allowed: readonly FieldName[] = [...ENTRY_TYPES[type].required, ...ENTRY_TYPES[type].optional];
    const entry: NewEntry = { type };
    for (const field of given) {
      if (!allowed.includes(field))
        throw new UsageError(
          `journal add ${type}: --${flag(field)} is not one of its fields (${allowed.map((f) => `--${flag(f)}`).join(', ')})`,
        );
      const value = values[flag(field)] as string | string[];
      const kind = ENTRY_FIELDS[field].kind;
      entry[field] =
        kind === 'list'
          ? Array.isArray(value)
            ? value
            : (splitList(value) ?? [])
          : kind === 'text'
            ? (value as string)
            : numberOption(flag(field), value as string, { integer: kind === 'count', min: 0 });
    }
    const missing = ENTRY_TYPES[type].required.find((f) => entry[f] === undefined);
    if (missing) throw new UsageError(`journal add ${type}: --${flag(missing)} is required (${missing}: ${ENTRY_FIELDS[missing].help})`);
    const added = await journal.append(entry);
    io.out(`${added.id}\n`);
    return EXIT.OK;
  },
};
