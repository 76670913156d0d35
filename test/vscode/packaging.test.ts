// The packaged extension: what the .vsix holds, that the installed copy (not the dev folder) is
// the one running with its contributions, and how long it took to load and activate by the
// host's own clock. The .vsix checks run in the vsix suite (scripts/vscode-host test-all --vsix),
// where HOST_TEST_VSIX names the file the host installed.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { expectedExtensionRoot, waitFor } from './host';

const ID = 'launchpad.launchpad';
/** The repository: this file runs from out/test/vscode. */
const REPO = path.resolve(__dirname, '..', '..', '..');
const vsix = process.env.HOST_TEST_VSIX;

const inside = (dir: string, file: string) => {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** The names in a zip file, from its central directory (no need to inflate anything). */
export function zipEntries(file: string): string[] {
  const buf = fs.readFileSync(file);
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error(`${file} is not a zip file`);
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: bad central directory entry ${i}`);
    const nameLength = buf.readUInt16LE(at + 28);
    names.push(buf.toString('utf8', at + 46, at + 46 + nameLength));
    at += 46 + nameLength + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
  }
  return names;
}

/** Every file the manifest points at: the bundle, grammars, language configurations, schemas, icons. */
function referencedFiles(manifest: Record<string, any>): string[] {
  const c = manifest.contributes ?? {};
  const files = [manifest.main, manifest.icon];
  for (const g of c.grammars ?? []) files.push(g.path);
  for (const l of c.languages ?? []) files.push(l.configuration);
  for (const j of c.jsonValidation ?? []) if (!/^https?:/.test(j.url)) files.push(j.url);
  for (const containers of Object.values(c.viewsContainers ?? {}) as { icon?: string }[][]) for (const v of containers) files.push(v.icon);
  for (const views of Object.values(c.views ?? {}) as { icon?: string }[][]) for (const v of views) files.push(v.icon);
  return files.filter((f): f is string => typeof f === 'string' && !f.startsWith('$(')).map((f) => path.posix.normalize(f));
}

describe('packaging', () => {
  const ext = () => vscode.extensions.getExtension(ID)!;

  before(async () => {
    await waitFor(`${ID} to activate`, () => !!vscode.extensions.getExtension(ID)?.isActive, 30_000);
  });

  it("the .vsix holds only the bundle, the CLI, its schema, the Task Graph page, media, the manifest, README, LICENSE and the bundled packages' notices", function () {
    if (!vsix) return this.skip(); // the vsix suite
    const entries = zipEntries(vsix).filter((e) => !e.endsWith('/'));
    const allowed = [
      /^extension\.vsixmanifest$/,
      /^\[Content_Types\]\.xml$/,
      /^extension\/package\.json$/,
      /^extension\/readme\.md$/i,
      /^extension\/license(\.txt|\.md)?$/i,
      /^extension\/dist\/extension\.js$/,
      /^extension\/dist\/cli\.js$/,
      /^extension\/dist\/harness-tasks\.schema\.json$/,
      /^extension\/dist\/webview\/dag\.(js|css)$/,
      /^extension\/dist\/THIRD_PARTY_NOTICES\.txt$/,
      /^extension\/media\/[\w.-]+\.(json|svg|png)$/,
    ];
    const unexpected = entries.filter((e) => !allowed.some((re) => re.test(e)));
    assert.deepEqual(unexpected, [], `not meant for the package:\n${unexpected.join('\n')}`);
    assert.ok(!entries.some((e) => /(^|\/)(src|test|out|node_modules|\.cache|bench|scripts|\.vscode)\//.test(e) || /\.(ts|map)$/.test(e)));
    for (const needed of [
      'extension/package.json',
      'extension/dist/extension.js',
      'extension/dist/cli.js',
      'extension/dist/harness-tasks.schema.json',
      'extension/dist/webview/dag.js',
      'extension/dist/webview/dag.css',
      'extension/dist/THIRD_PARTY_NOTICES.txt',
    ]) {
      assert.ok(entries.includes(needed), `${needed} is missing`);
    }
    assert.ok(
      entries.some((e) => /^extension\/readme\.md$/i.test(e)),
      'README',
    );
    assert.ok(
      entries.some((e) => /^extension\/license/i.test(e)),
      'LICENSE',
    );
    // Everything the manifest points at is packaged.
    for (const file of referencedFiles(ext().packageJSON))
      assert.ok(entries.includes(`extension/${file}`), `${file} is referenced but not packaged`);
  });

  it('the installed copy is the one running, not the dev folder', function () {
    if (!vsix) {
      // The trusted suite loads the extension from the repository.
      assert.equal(path.resolve(ext().extensionPath), REPO);
      return;
    }
    const installed = ext().extensionPath;
    assert.ok(inside(expectedExtensionRoot()!, installed), `${installed} is not under the host's extensions dir`);
    assert.ok(!inside(REPO, installed) || inside(path.join(REPO, '.cache'), installed), `${installed} is the dev folder`);
    assert.ok(ext().isActive);
    const loaded = Object.keys(require.cache);
    assert.ok(loaded.includes(path.join(installed, 'dist', 'extension.js')), 'the installed bundle is loaded');
    assert.ok(!loaded.includes(path.join(REPO, 'dist', 'extension.js')), 'the dev bundle is not loaded');
    // What was installed is what the .vsix holds.
    const files = (dir: string, rel = ''): string[] =>
      fs
        .readdirSync(path.join(dir, rel), { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? files(dir, path.posix.join(rel, e.name)) : [path.posix.join(rel, e.name)]));
    const packaged = zipEntries(vsix)
      .filter((e) => e.startsWith('extension/') && !e.endsWith('/'))
      .map((e) => e.slice('extension/'.length));
    assert.deepEqual(
      files(installed)
        .filter((f) => f !== '.vsixmanifest')
        .sort(),
      packaged.sort(),
    );
  });

  it('its contributions are live: commands, the log language and grammar, the task file schema', async () => {
    const manifest = ext().packageJSON;
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('launchpad.filterLog'));
    const contributed = (manifest.contributes.commands as { command: string }[]).map((c) => c.command);
    assert.ok(contributed.includes('launchpad.filterLog'));
    assert.ok((await vscode.languages.getLanguages()).includes('launchpad-log'));
    const grammar = (manifest.contributes.grammars as { language: string; path: string }[]).find((g) => g.language === 'launchpad-log')!;
    assert.ok(
      JSON.parse(fs.readFileSync(path.join(ext().extensionPath, grammar.path), 'utf8')).patterns.length > 0,
      'the grammar is no placeholder',
    );
    const schema = (manifest.contributes.jsonValidation as { fileMatch: string[]; url: string }[]).find((j) =>
      j.fileMatch.includes('harness-tasks.json'),
    )!;
    assert.ok(fs.existsSync(path.join(ext().extensionPath, schema.url)));
    // A log file opens in the language, coloured by the grammar above.
    const doc = await vscode.workspace.openTextDocument({
      language: 'launchpad-log',
      content: '[2025-07-01T10:00:00Z] [SESSION-1] INIT ok\n',
    });
    assert.equal(doc.languageId, 'launchpad-log');
  });

  it("records its code-load and activation times from the host's own marks, for npm run bench", () => {
    // The extension host marks code/extHost/{will,did}LoadExtensionCode/<id> around the
    // require of the bundle and {will,did}ActivateExtension/<id> around activate(). Speed is
    // judged by the benchmark (bench/extension.mjs reads the file written here), not by a test.
    const perf = (globalThis as { MonacoPerformanceMarks?: { getMarks(): { name: string; startTime: number }[] } }).MonacoPerformanceMarks;
    assert.ok(perf, 'this host keeps no performance marks');
    const marks = new Map(perf.getMarks().map((m) => [m.name, m.startTime]));
    const span = (what: string) => {
      const start = marks.get(`code/extHost/will${what}/${ID}`);
      const end = marks.get(`code/extHost/did${what}/${ID}`);
      assert.ok(start !== undefined && end !== undefined, `no ${what} marks for ${ID}`);
      return end - start;
    };
    const codeLoadMs = span('LoadExtensionCode');
    const activateMs = span('ActivateExtension');
    const load = os.loadavg()[0]!;
    const cores = os.cpus().length;
    const figures = {
      suite: process.env.HOST_TEST_SUITE,
      vsix: !!vsix,
      codeLoadMs,
      activateMs,
      totalMs: codeLoadMs + activateMs,
      loadAverage: load,
      cores,
      measuredAt: new Date().toISOString(),
    };
    console.log(`activation: ${JSON.stringify(figures)}`);
    if (process.env.HOST_TEST_RESULTS)
      fs.writeFileSync(
        path.join(path.dirname(process.env.HOST_TEST_RESULTS), 'activation-times.json'),
        JSON.stringify(figures, null, 2) + '\n',
      );
    assert.ok(codeLoadMs >= 0 && activateMs >= 0, `marks out of order: ${JSON.stringify(figures)}`);
  });
});
