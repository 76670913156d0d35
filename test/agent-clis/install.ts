// The agent CLIs at the versions the suite proves (each preset's `proven`), installed from npm
// under the ignored .cache/agent-clis/<preset>-<version>/, once: later runs reuse them.
//   node out/test/agent-clis/install.js [preset …]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { AGENT_PRESETS, type AgentPreset, findPreset } from '../../src/core/agents/presets';

export const ROOT = resolve(__dirname, '../../..');
const CACHE = join(ROOT, '.cache', 'agent-clis');
const INSTALL_TIMEOUT_MS = 10 * 60_000;

export function provenPresets(): AgentPreset[] {
  return AGENT_PRESETS.filter((p) => p.proven);
}

function dirOf(preset: AgentPreset): string {
  return join(CACHE, `${preset.name}-${preset.proven!.version}`);
}

/** The folder holding the installed tool's executable (`node_modules/.bin`), installing it first if needed. */
export function installCli(preset: AgentPreset): string {
  if (!preset.proven) throw new Error(`${preset.name}: no npm package to install`);
  const dir = dirOf(preset);
  const bin = join(dir, 'node_modules', '.bin');
  const done = join(dir, '.installed');
  if (existsSync(done)) return bin;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const spec = `${preset.proven.npm}@${preset.proven.version}`;
  // The tool's own install script runs, as in a person's install.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true, allowScripts: { [preset.proven.npm]: true } }));
  const started = Date.now();
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', dir, spec], {
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: INSTALL_TIMEOUT_MS,
    // The project's own npm settings (a silent log level from `npm run`) are not the install's.
    env: { ...process.env, npm_config_loglevel: 'warn' },
  });
  if (r.status !== 0) throw new Error(`npm install ${spec} failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`})`);
  if (!existsSync(join(bin, preset.executable))) throw new Error(`npm install ${spec} left no ${preset.executable} in ${bin}`);
  writeFileSync(done, `${spec}\n`);
  console.log(`agent-clis: ${spec} installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return bin;
}

if (require.main === module) {
  const names = process.argv.slice(2);
  const presets = names.length ? names.map((n) => findPreset(n) ?? (console.error(`no preset ${n}`), process.exit(2))) : provenPresets();
  for (const p of presets) {
    const bin = installCli(p);
    console.log(`agent-clis: ${p.name} ${p.proven!.version} ready (${join(bin, p.executable)})`);
  }
}
