// Lint rules for the whole tree. Formatting is prettier's (npm run format:check); this file
// holds what a formatter cannot see: the layer boundary, promises nobody awaits, import order.
import js from '@eslint/js';
import simpleImportSort from 'eslint-plugin-simple-import-sort';
import tseslint from 'typescript-eslint';

import { noImportCycle } from './scripts/eslint/noImportCycle.mjs';

/** The core and the CLI never import vscode; the core never reaches into a front end. */
const boundary = (extra, more = []) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'vscode', message: 'src/core and src/cli run without VS Code: keep vscode in src/vscode.' }],
      patterns: [{ group: extra, message: 'The core is shared by both front ends and must not import either of them.' }, ...more],
    },
  ],
});

/** The worktree mechanics sit below the controller that drives an attempt through them. */
const belowController = [
  { group: ['**/controller/**', '../controller'], message: 'src/core/worktrees is used by the controller and must not import it.' },
];

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.cache/**', 'test/fixtures/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-explicit-any': 'error',
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
      'simple-import-sort/imports': 'error',
      'simple-import-sort/exports': 'error',
      'no-control-regex': 'off',
    },
  },
  // Tests load modules the way node does (a second copy, a cache reset) and poke at internals.
  { files: ['test/**/*.ts'], rules: { '@typescript-eslint/no-require-imports': 'off', '@typescript-eslint/no-explicit-any': 'off' } },
  // Code that runs in the browser page (Playwright's page.evaluate).
  { files: ['scripts/vscode-host/**/*.mjs'], languageOptions: { globals: { document: 'readonly', window: 'readonly' } } },
  { files: ['src/core/**/*.ts'], rules: boundary(['**/cli/**', '**/vscode/**', '../cli', '../vscode']) },
  { files: ['src/core/worktrees/**/*.ts'], rules: boundary(['**/cli/**', '**/vscode/**', '../cli', '../vscode'], belowController) },
  // A cycle of imports leaves one module reading another's exports before they exist; type-only
  // imports (import type) leave nothing at run time and are not counted.
  {
    files: ['src/**/*.ts'],
    plugins: { launchpad: { rules: { 'no-import-cycle': noImportCycle } } },
    rules: { 'launchpad/no-import-cycle': ['error', { root: 'src' }] },
  },
  { files: ['src/cli/**/*.ts'], rules: boundary(['**/vscode/**', '../vscode']) },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
        AbortController: 'readonly',
      },
    },
    plugins: { 'simple-import-sort': simpleImportSort },
    rules: { 'simple-import-sort/imports': 'error', 'no-unused-vars': ['error', { argsIgnorePattern: '^_', caughtErrors: 'none' }] },
  },
);
