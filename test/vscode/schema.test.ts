// harness-tasks.json gets the core's JSON Schema through `jsonValidation`: the JSON language
// service of the host reports a bad status as the user types, and nothing on a valid file.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { taskFileJsonSchema } from '../../src/core/taskFile/jsonSchema';
import { waitFor } from './host';

const ID = 'launchpad.launchpad';

const taskFile = (status: string) =>
  JSON.stringify(
    {
      version: 3,
      session_config: { max_parallel_agents: 2 },
      tasks: [
        { id: 'task-001', title: 'Write the parser', status: 'completed', validation: { command: 'npm test' } },
        { id: 'task-002', title: 'Wire it up', status, depends_on: ['task-001'], a_field_of_my_own: true },
      ],
    },
    null,
    2,
  ) + '\n';

const schemaProblems = (uri: vscode.Uri) =>
  vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.source === 'json' || /Value is not accepted|Incorrect type|Missing property/.test(d.message));

describe('task file schema', () => {
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(vscode.workspace.workspaceFolders![0]!.uri.fsPath, 'schema-check-'));
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('points jsonValidation at the schema the extension ships, generated from the core', () => {
    const ext = vscode.extensions.getExtension(ID)!;
    const rules = ext.packageJSON.contributes.jsonValidation as { fileMatch: string[]; url: string }[];
    const rule = rules.find((r) => r.fileMatch.includes('harness-tasks.json'));
    assert.ok(rule, 'a jsonValidation rule for harness-tasks.json');
    const file = path.join(ext.extensionPath, rule.url);
    assert.ok(fs.existsSync(file), `${file} is in the extension`);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), taskFileJsonSchema());
  });

  it('reports a bad status, and stops once it is fixed', async function () {
    this.timeout(60_000);
    const file = path.join(dir, 'harness-tasks.json');
    fs.writeFileSync(file, taskFile('done'));
    const doc = await vscode.workspace.openTextDocument(file);
    assert.equal(doc.languageId, 'json');
    await vscode.window.showTextDocument(doc);

    await waitFor('a diagnostic on the bad status', () => schemaProblems(doc.uri).length > 0, 45_000);
    const [problem, ...more] = schemaProblems(doc.uri);
    assert.equal(more.length, 0, JSON.stringify(schemaProblems(doc.uri).map((d) => d.message)));
    assert.match(problem!.message, /"pending", "in_progress", "completed", "failed"/);
    assert.equal(doc.getText(problem!.range), '"done"');

    // Fixed in the editor (not even saved): the problem goes; unknown fields stay allowed.
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, problem!.range, '"pending"');
    assert.ok(await vscode.workspace.applyEdit(edit));
    await waitFor('the diagnostic to clear', () => schemaProblems(doc.uri).length === 0, 30_000);
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('workbench.action.files.revert');
    await waitFor('the edit to be reverted', () => !doc.isDirty);
  });

  it("a hover on a field shows its description, the schema's", async function () {
    this.timeout(60_000);
    const file = path.join(dir, 'hover', 'harness-tasks.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, taskFile('pending'));
    const doc = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(doc, { preview: false });
    const schema = taskFileJsonSchema() as { properties: { session_config: { properties: Record<string, { description: string }> } } };
    const description = schema.properties.session_config.properties.max_parallel_agents!.description;
    const firstWords = description.split('.')[0]!;
    const at = doc.positionAt(doc.getText().indexOf('"max_parallel_agents"') + 2);
    // The JSON language service answers once it has the schema: ask until then.
    let shown = '';
    for (const end = Date.now() + 45_000; !shown.includes(firstWords) && Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
      const hovers = (await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', doc.uri, at)) ?? [];
      shown = hovers
        .flatMap((h) => h.contents)
        .map((c) => (typeof c === 'string' ? c : c.value))
        .join('\n');
    }
    assert.ok(shown.includes(firstWords), `the hover on max_parallel_agents: ${shown || '(none)'}`);
  });

  it('finds nothing wrong with a valid file', async function () {
    this.timeout(60_000);
    // A valid file and, after it, a broken one: once the broken one is reported, the service
    // has looked at the valid one too.
    const good = path.join(dir, 'good', 'harness-tasks.json');
    const bad = path.join(dir, 'bad', 'harness-tasks.json');
    fs.mkdirSync(path.dirname(good));
    fs.mkdirSync(path.dirname(bad));
    fs.writeFileSync(good, taskFile('in_progress'));
    fs.writeFileSync(bad, taskFile('running'));
    const goodDoc = await vscode.workspace.openTextDocument(good);
    await vscode.window.showTextDocument(goodDoc, { preview: false });
    const badDoc = await vscode.workspace.openTextDocument(bad);
    await vscode.window.showTextDocument(badDoc, { preview: false });
    await waitFor('the broken file to be reported', () => schemaProblems(badDoc.uri).length > 0, 45_000);
    await vscode.window.showTextDocument(goodDoc, { preview: false });
    await new Promise((r) => setTimeout(r, 1_500));
    // Only Launchpad's own word on the field it does not read (the next test's).
    assert.deepEqual(
      vscode.languages.getDiagnostics(goodDoc.uri).map((d) => d.message),
      ['tasks[1].a_field_of_my_own is not a field Launchpad reads; it is kept as it is'],
    );
  });

  it('warns on a key Launchpad does not read, with the words and the guess of the CLI, until it is fixed', async function () {
    this.timeout(60_000);
    const file = path.join(dir, 'typo', 'harness-tasks.json');
    fs.mkdirSync(path.dirname(file));
    fs.writeFileSync(file, taskFile('pending').replace('"depends_on"', '"depend_on"'));
    const doc = await vscode.workspace.openTextDocument(file);
    await vscode.window.showTextDocument(doc, { preview: false });
    const ours = () => vscode.languages.getDiagnostics(doc.uri).filter((d) => d.source === 'Launchpad');
    await waitFor('the warnings on the unknown keys', () => ours().length === 2, 30_000);
    const [typo, own] = ours();
    assert.equal(typo!.message, 'tasks[1].depend_on is not a field Launchpad reads (did you mean depends_on?); it is kept as it is');
    assert.equal(typo!.severity, vscode.DiagnosticSeverity.Warning);
    assert.equal(doc.getText(typo!.range), '"depend_on"');
    assert.equal(doc.getText(own!.range), '"a_field_of_my_own"');

    // Fixed in the editor, not saved: the warning goes.
    const edit = new vscode.WorkspaceEdit();
    edit.replace(doc.uri, typo!.range, '"depends_on"');
    assert.ok(await vscode.workspace.applyEdit(edit));
    await waitFor('the typo warning to clear', () => ours().length === 1, 30_000);
    await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand('workbench.action.files.revert');
    await waitFor('the edit to be reverted', () => !doc.isDirty);
  });
});
