// A filtered view of the progress log is a read-only document whose URI says what it shows:
//   launchpad-log:/harness-progress.txt (type ERROR)?file=/abs/harness-progress.txt&type=ERROR
// The path is the tab's title and, matching the language's `harness-progress.txt*` pattern,
// makes the document a `launchpad-log` one (coloured, hovers, links); the query holds the log
// file and the filter values as `launchpad log` takes them.
import * as vscode from 'vscode';

import type { LogFilterValues } from '../../core/log/logFilterSpec';
import { PROGRESS_FILE } from '../../core/statePaths';

export const FILTER_SCHEME = 'launchpad-log';

/** Filter values as strings, keyed as `launchpad log`'s options. */
export type FilterValues = { [K in keyof LogFilterValues]?: string };
const KEYS = ['type', 'category', 'task', 'session', 'grep'] as const;

export interface FilterRequest {
  /** The absolute path of harness-progress.txt. */
  file: string;
  values: FilterValues;
}

export function filterUri({ file, values }: FilterRequest): vscode.Uri {
  const query = new URLSearchParams({ file });
  for (const key of KEYS) if (values[key] !== undefined) query.set(key, values[key]!);
  const title = `${PROGRESS_FILE} (${describeFilter(values)})`.replace(/[/\\]/g, '∕');
  return vscode.Uri.from({ scheme: FILTER_SCHEME, path: `/${title}`, query: query.toString() });
}

export function parseFilterUri(uri: vscode.Uri): FilterRequest {
  const query = new URLSearchParams(uri.query);
  const values: FilterValues = {};
  for (const key of KEYS) {
    const value = query.get(key);
    if (value !== null) values[key] = value;
  }
  return { file: query.get('file') ?? '', values };
}

/** "type ERROR, session 3", for titles and messages. */
export function describeFilter(values: FilterValues): string {
  const parts = KEYS.filter((k) => values[k] !== undefined).map((k) => `${k} ${k === 'grep' ? `/${values[k]}/` : values[k]}`);
  return parts.length ? parts.join(', ') : 'all lines';
}

/** The CLI command printing the same lines, e.g. `launchpad log --type ERROR --grep 'a b'`. */
export function cliCommand(values: FilterValues): string {
  const quote = (s: string) => (/^[\w.,:/=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return ['launchpad log', ...KEYS.filter((k) => values[k] !== undefined).map((k) => `--${k} ${quote(values[k]!)}`)].join(' ');
}
