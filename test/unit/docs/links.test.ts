// What the documentation points at must be there: every relative link reaches a file (and its
// #anchor a heading of that file, as GitHub makes anchors), every `docs/x.md` or repository path
// named in backticks exists, and every `launchpad <command>` shown is a command of the CLI.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

import { COMMANDS } from '../../../src/cli/main';

const ROOT = resolve(__dirname, '../../../..');
const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'ARCHITECTURE.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

interface Line {
  file: string;
  line: number;
  text: string;
  /** Inside a fenced code block. */
  code: boolean;
}

function lines(file: string, text = readFileSync(join(ROOT, file), 'utf8')): Line[] {
  let fence: string | undefined;
  return text.split('\n').map((text, i) => {
    const marker = /^\s*(```+|~~~+)/.exec(text)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return { file, line: i + 1, text, code: true };
    }
    return { file, line: i + 1, text, code: fence !== undefined };
  });
}

/** The text outside inline code spans, which is where markdown makes links. */
const outsideCode = (text: string) => text.replace(/(`+)[\s\S]*?\1/g, '');
const codeSpans = (text: string) => [...text.matchAll(/(`+)([\s\S]*?)\1/g)].map((m) => m[2]!.trim());

/** GitHub's anchors for a file's headings: rendered text, lower case, punctuation dropped, spaces to '-', repeats numbered. */
function anchors(file: string, text?: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const l of lines(file, text)) {
    for (const m of l.text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) out.add(m[1]!);
    const heading = !l.code && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l.text);
    if (!heading) continue;
    const rendered = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const slug = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

const where = (l: Line) => `${l.file}:${l.line}`;

describe('documentation: links, named files and commands', () => {
  it('every relative link resolves to a file, and its #anchor to a heading there', () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      for (const l of lines(file).filter((l) => !l.code)) {
        for (const m of outsideCode(l.text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = m[1]!;
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
          const [path, anchor] = target.split('#') as [string, string | undefined];
          const resolved = path ? resolve(dirname(join(ROOT, file)), decodeURIComponent(path)) : join(ROOT, file);
          if (!existsSync(resolved)) {
            broken.push(`${where(l)}: ${target}: no file ${relative(ROOT, resolved)}`);
          } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(relative(ROOT, resolved)).has(anchor)) {
            broken.push(`${where(l)}: ${target}: no heading with the anchor #${anchor} in ${relative(ROOT, resolved)}`);
          }
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('every docs/x.md or repository path named in backticks exists', () => {
    const missing: string[] = [];
    for (const file of DOCS) {
      for (const l of lines(file).filter((l) => !l.code)) {
        for (const span of codeSpans(l.text)) {
          // A path into this repository: a docs page, or a file or folder under a top-level folder.
          if (!/^(docs\/[\w.-]+\.md|(src|scripts|test|bench|docs|media)\/[\w./-]+)$/.test(span)) continue;
          if (!existsSync(join(ROOT, span))) missing.push(`${where(l)}: \`${span}\` does not exist`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });

  it('every `launchpad <command>` shown is a command of the CLI (and its subcommand one it takes)', () => {
    const names = new Map(COMMANDS.map((c) => [c.name, c]));
    /** The words a command takes as a subcommand: the lower-case words of its usage line. */
    const subcommands = (name: string) =>
      new Set(
        names
          .get(name)!
          .usage.split(/[\s|[\]()]+/)
          .filter((w) => /^[a-z][a-z-]*$/.test(w) && w !== 'launchpad' && w !== name),
      );
    const wrong: string[] = [];
    let shown = 0;
    for (const file of DOCS) {
      for (const l of lines(file)) {
        // In a code block, every command line; elsewhere, a code span that is a command.
        const texts = l.code ? [l.text] : codeSpans(l.text).filter((s) => /^(launchpad|node dist\/cli\.js) /.test(s));
        for (const text of texts) {
          for (const m of text.matchAll(
            /(?:^|[\s;&|($`])(?:launchpad|node\s+\S*dist\/cli\.js)\s+(?:--dir\s+\S+\s+)?([a-z][a-z-]*)(?:\s+([a-z][a-z-]*)\b(?![./=]))?/g,
          )) {
            const [, command, sub] = m as unknown as [string, string, string | undefined];
            shown++;
            if (!names.has(command)) {
              wrong.push(`${where(l)}: "launchpad ${command}" is not a command (launchpad --help lists them)`);
              continue;
            }
            const subs = subcommands(command);
            if (sub && subs.size > 0 && !subs.has(sub)) {
              wrong.push(`${where(l)}: "launchpad ${command} ${sub}": ${command} takes ${[...subs].join(', ')}`);
            }
          }
        }
      }
    }
    assert.ok(shown > 20, `only ${shown} commands found: the search is broken`);
    assert.deepEqual(wrong, []);
  });
});

describe('documentation checks: GitHub anchors', () => {
  it('are the heading as rendered, in lower case, punctuation dropped, spaces as dashes, repeats numbered', () => {
    const text = [
      "## D5. The machine's failures are not the task's",
      '### `run --in-place` and [links](x.md)',
      '## Files',
      '```sh',
      '# not a heading',
      '```',
      '## Files',
      '<a id="kept-anchor"></a>',
    ].join('\n');
    assert.deepEqual([...anchors('example.md', text)].sort(), [
      'd5-the-machines-failures-are-not-the-tasks',
      'files',
      'files-1',
      'kept-anchor',
      'run---in-place-and-links',
    ]);
  });
});
