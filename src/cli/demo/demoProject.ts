// The built-in demo: a tiny text-utilities repository with six dependent tasks, run by a
// deterministic demo agent (demoAgent.ts). No AI involved; some tasks fail once on purpose.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { initStateFiles } from '../../core/init';
import { StatePaths } from '../../core/statePaths';
import { StateStore } from '../../core/taskFile/store';
import { addTask, type NewTask } from '../../core/tasks/taskOps';

const FILES: Record<string, string> = {
  'README.md': "# textkit\n\nSmall text utilities, built task by task by Launchpad's demo agent.\n",
  // One checker for every task: `node check.js <part>` exits 0 when that part is done.
  'check.js': `const assert = require('node:assert/strict');
const fs = require('node:fs');
const part = process.argv[2];
const load = (name) => require('./src/' + name + '.js');
const checks = {
  slugify: () => assert.equal(load('slugify').slugify(' Hello, World! '), 'hello-world'),
  wordCount: () => {
    assert.equal(load('wordCount').wordCount('one  two three'), 3, 'wordCount("one  two three") should be 3');
    assert.equal(load('wordCount').wordCount('   '), 0, 'wordCount of blanks should be 0');
  },
  capitalize: () => assert.equal(load('capitalize').capitalize('launchpad'), 'Launchpad'),
  titleCase: () => assert.equal(load('titleCase').titleCase('the quick fox'), 'The Quick Fox'),
  index: () => assert.deepEqual(Object.keys(require('./src/index.js')).sort(), ['capitalize', 'slugify', 'titleCase', 'wordCount']),
  docs: () => {
    const text = fs.readFileSync('docs/API.md', 'utf8');
    for (const fn of ['slugify', 'wordCount', 'capitalize', 'titleCase']) assert.ok(text.includes(fn), 'docs/API.md does not mention ' + fn);
  },
};
if (!checks[part]) { console.error('unknown part ' + part); process.exit(2); }
checks[part]();
console.log('ok: ' + part);
`,
};

const TASKS: NewTask[] = [
  {
    title: 'Add slugify()',
    context: 'src/slugify.js exporting slugify(text): lower-case, words joined by "-", punctuation dropped.',
    files: ['src/slugify.js'],
    validate: 'node check.js slugify',
    timeoutSeconds: 30,
  },
  {
    title: 'Add wordCount()',
    context: 'src/wordCount.js exporting wordCount(text): the number of words, any whitespace between them.',
    files: ['src/wordCount.js'],
    validate: 'node check.js wordCount',
    timeoutSeconds: 30,
  },
  {
    title: 'Add capitalize()',
    context: 'src/capitalize.js exporting capitalize(word): first letter upper-case.',
    files: ['src/capitalize.js'],
    validate: 'node check.js capitalize',
    timeoutSeconds: 30,
  },
  {
    title: 'Add titleCase() built on capitalize()',
    context: 'src/titleCase.js exporting titleCase(text), using capitalize() from task-003.',
    files: ['src/titleCase.js'],
    dependsOn: ['task-003'],
    validate: 'node check.js titleCase',
    timeoutSeconds: 30,
  },
  {
    title: 'Export everything from src/index.js',
    context: 'src/index.js re-exporting slugify, wordCount, capitalize and titleCase.',
    files: ['src/index.js'],
    dependsOn: ['task-001', 'task-002', 'task-004'],
    validate: 'node check.js index',
    timeoutSeconds: 30,
  },
  {
    title: 'Document the API in docs/API.md',
    context: 'docs/API.md with one section per function.',
    files: ['docs/'],
    dependsOn: ['task-001', 'task-002', 'task-004'],
    validate: 'node check.js docs',
    timeoutSeconds: 30,
    priority: 'P2',
  },
];

/** Creates the demo repository and its task file in `dir` (which must be empty or absent). */
export async function createDemoProject(dir: string, agentCommand: string): Promise<StatePaths> {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Launchpad Demo');
  git('config', 'user.email', 'demo@launchpad.invalid');
  git('config', 'commit.gpgsign', 'false');
  for (const [path, content] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const paths = new StatePaths(dir);
  await initStateFiles(paths, { gitignore: true });
  await new StateStore(paths, 'launchpad demo').transact((file) => {
    file.session_config.max_parallel_agents = 3;
    file.session_config.agent_command = agentCommand;
    file.session_config.agent_timeout_seconds = 60;
    // A failed task waits for the base to move or this back-off: short, so the demo never idles.
    file.session_config.retry_backoff_seconds = 2;
    for (const task of TASKS) addTask(file, task);
  });
  git('add', '-A');
  git('commit', '-q', '-m', 'textkit: project skeleton');
  return paths;
}
