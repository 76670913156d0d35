// An eslint rule of the project's own: no cycle of imports between the modules of src/. A cycle
// leaves one module reading another's exports before they exist. Imports that leave nothing at
// run time (`import type`, or only `type` names) do not count. The graph is read once per lint
// run with the TypeScript parser (a module's imports only), and its cycles found by Tarjan's
// strongly connected components; each import that stays inside a cycle is reported.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

import ts from 'typescript';

const graphs = new Map();

/** The value imports of a source file: [specifier, line] for each relative one. */
function valueImports(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found = [];
  for (const node of source.statements) {
    const isImport = ts.isImportDeclaration(node);
    const isExport = ts.isExportDeclaration(node) && node.moduleSpecifier;
    if (!isImport && !isExport) continue;
    const spec = node.moduleSpecifier.text;
    if (!spec.startsWith('.')) continue;
    if (isImport) {
      const clause = node.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause &&
        !clause.name &&
        named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      if (onlyTypes) continue;
    } else if (node.isTypeOnly) continue;
    found.push(spec);
  }
  return found;
}

function resolveModule(from, spec) {
  const base = resolve(dirname(from), spec);
  for (const candidate of [`${base}.ts`, join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return undefined;
}

function tsFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** For the tree under `root`: each module in a cycle, with the set of modules of its cycle. */
function cyclesUnder(root) {
  if (graphs.has(root)) return graphs.get(root);
  const edges = new Map();
  for (const file of tsFiles(root))
    edges.set(
      file,
      valueImports(file)
        .map((s) => resolveModule(file, s))
        .filter(Boolean),
    );
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const inCycle = new Map();
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = new Set();
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.add(w);
    } while (w !== v);
    if (component.size > 1) for (const m of component) inCycle.set(m, component);
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  graphs.set(root, inCycle);
  return inCycle;
}

export const noImportCycle = {
  meta: {
    type: 'problem',
    schema: [{ type: 'object', properties: { root: { type: 'string' } } }],
    messages: { cycle: 'This import is part of a cycle: {{ path }}' },
  },
  create(context) {
    const root = resolve(context.options[0]?.root ?? 'src');
    const file = resolve(context.filename);
    const component = cyclesUnder(root).get(file);
    if (!component) return {};
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string' || node.importKind === 'type' || node.exportKind === 'type') return;
      const target = resolveModule(file, node.source.value);
      if (!target || !component.has(target)) return;
      if (node.specifiers?.length && node.specifiers.every((s) => s.importKind === 'type')) return;
      const path = [...component].map((m) => m.slice(root.length + 1)).join(' → ');
      context.report({ node, messageId: 'cycle', data: { path } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};
