// Writes the settings into package.json from their declarations in src/vscode/settingsSchema.ts
// (read from its transpiled copy in out/): `contributes.configuration` and
// `capabilities.untrustedWorkspaces.restrictedConfigurations`. The rest of the file is kept as is.
// Run by the build (esbuild.mjs) after out/ is written; test/unit/vscode/settingsContribution
// fails when package.json differs, so a hand edit or a missed regeneration is caught.
//   node scripts/gen-settings.mjs [--package <file>]   (default: package.json beside scripts/)
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Rewrites `file` when its settings differ from the schema's; true when it did. */
export function writeSettings(file = join(root, 'package.json')) {
  const require = createRequire(import.meta.url);
  const { settingsContribution } = require(join(root, 'out/src/vscode/settingsSchema.js'));
  const { configuration, restrictedConfigurations } = settingsContribution();
  const text = readFileSync(file, 'utf8');
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not valid JSON (${err.message}); settings not written`);
  }
  manifest.contributes ??= {};
  manifest.contributes.configuration = configuration;
  manifest.capabilities ??= {};
  manifest.capabilities.untrustedWorkspaces ??= {};
  manifest.capabilities.untrustedWorkspaces.restrictedConfigurations = restrictedConfigurations;
  const next = JSON.stringify(manifest, null, 2) + '\n';
  if (next === text) return false;
  writeFileSync(file, next);
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--package');
  if (i > 0 && !process.argv[i + 1]) {
    console.error('usage: node scripts/gen-settings.mjs [--package <file>]');
    process.exit(2);
  }
  const file = i > 0 ? resolve(process.argv[i + 1]) : join(root, 'package.json');
  try {
    if (writeSettings(file)) console.log(`${file}: settings regenerated from src/vscode/settingsSchema.ts`);
  } catch (err) {
    console.error(err.message);
    process.exit(1);
  }
}
