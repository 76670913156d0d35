// The core and the CLI never import vscode, and the core never reaches into a front end.
// A regex scan is enough: every import form we use names the module in quotes.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const rules = [
  { dir: 'src/core', banned: [/^vscode$/, /\/(cli|vscode)\//, /^\.\.\/(cli|vscode)(\/|$)/] },
  { dir: 'src/cli', banned: [/^vscode$/, /\/vscode\//, /^\.\.\/vscode(\/|$)/] },
];
const importRe = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

function files(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const problems = [];
for (const { dir, banned } of rules) {
  for (const file of files(dir)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(importRe)) {
      if (banned.some((re) => re.test(m[1]))) {
        const line = text.slice(0, m.index).split('\n').length;
        problems.push(`${relative('.', file)}:${line}: '${m[1]}' may not be imported from ${dir}`);
      }
    }
  }
}
if (problems.length) {
  console.error(problems.join('\n'));
  console.error(`lint: ${problems.length} boundary violation(s)`);
  process.exit(1);
}
console.log('lint: src/core and src/cli are free of vscode');
