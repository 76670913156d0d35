// The demo agent: deterministic stand-in for a coding agent. It reads the environment of
// the agent contract, writes the task's files, commits, and prints its verdict. task-002 writes a bug on
// its first attempt (the validation fails, the retry's prompt carries the error and it fixes
// it); task-006 reports RESULT:FAIL on its first attempt.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

type Recipe = { files: Record<string, string>; firstAttempt?: 'buggy' | 'gives-up'; buggy?: Record<string, string> };

const RECIPES: Record<string, Recipe> = {
  'task-001': {
    files: {
      'src/slugify.js': `exports.slugify = (text) =>\n  text.toLowerCase().replace(/[^a-z0-9\\s-]/g, '').trim().split(/[\\s-]+/).filter(Boolean).join('-');\n`,
    },
  },
  'task-002': {
    firstAttempt: 'buggy',
    buggy: { 'src/wordCount.js': `exports.wordCount = (text) => text.split(' ').length;\n` },
    files: { 'src/wordCount.js': `exports.wordCount = (text) => text.split(/\\s+/).filter(Boolean).length;\n` },
  },
  'task-003': { files: { 'src/capitalize.js': `exports.capitalize = (word) => word.charAt(0).toUpperCase() + word.slice(1);\n` } },
  'task-004': {
    files: {
      'src/titleCase.js': `const { capitalize } = require('./capitalize');\nexports.titleCase = (text) => text.split(' ').map(capitalize).join(' ');\n`,
    },
  },
  'task-005': {
    files: {
      'src/index.js': `module.exports = {\n  ...require('./slugify'),\n  ...require('./wordCount'),\n  ...require('./capitalize'),\n  ...require('./titleCase'),\n};\n`,
    },
  },
  'task-006': {
    firstAttempt: 'gives-up',
    files: {
      'docs/API.md':
        '# textkit API\n\n## slugify(text)\nURL-safe lower-case slug.\n\n## wordCount(text)\nNumber of words.\n\n## capitalize(word)\nFirst letter upper-case.\n\n## titleCase(text)\nEvery word capitalized.\n',
    },
  },
};

export async function runDemoAgent(env: NodeJS.ProcessEnv, out: (text: string) => void): Promise<number> {
  const id = env.LAUNCHPAD_TASK_ID ?? '';
  const attempt = Number(env.LAUNCHPAD_ATTEMPT ?? '1');
  const recipe = RECIPES[id];
  if (!recipe) {
    out(`RESULT:FAIL the demo agent has no recipe for task ${id}\n`);
    return 0;
  }
  const prompt = env.LAUNCHPAD_PROMPT_FILE ? readFileSync(env.LAUNCHPAD_PROMPT_FILE, 'utf8') : '';
  const retrying = prompt.includes('## Previous Attempt(s)');
  out(`demo agent: ${id} attempt ${attempt}${retrying ? ' (the prompt carries the previous error)' : ''}\n`);
  out('CHECKPOINT step=1/2 "read the task"\n');
  await sleep(300 + (id.charCodeAt(id.length - 1) % 3) * 250);

  if (recipe.firstAttempt === 'gives-up' && !retrying) {
    out('RESULT:FAIL docs/ does not exist yet and the prompt did not say to create it\n');
    return 0;
  }
  const files = recipe.firstAttempt === 'buggy' && !retrying ? recipe.buggy! : recipe.files;
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
  execFileSync('git', ['add', '-A'], { stdio: 'pipe' });
  execFileSync('git', ['commit', '-q', '-m', `[${id}] ${env.LAUNCHPAD_TASK_TITLE ?? ''}`], { stdio: 'pipe' });
  out('CHECKPOINT step=2/2 "implemented and committed"\n');
  out('RESULT:SUCCESS\n');
  return 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
