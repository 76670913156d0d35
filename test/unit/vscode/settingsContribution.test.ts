// The settings are declared once (src/vscode/settingsSchema.ts); package.json's settings blocks
// are generated from that by the build (scripts/gen-settings.mjs). These tests fail when
// package.json was edited by hand or not regenerated, and check the generator and the validation.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { AGENT_PRESETS } from '../../../src/core/agents/presets';
import { PRESET_CHOICES, SETTING_DECLARATIONS, SETTINGS, settingsContribution } from '../../../src/vscode/settingsSchema';
import { parseSettings } from '../../../src/vscode/settingsValidation';
import { tempDir } from '../helpers/tmp';

const ROOT = resolve(__dirname, '../../../..');
const GENERATOR = join(ROOT, 'scripts/gen-settings.mjs');

interface Manifest {
  contributes: { configuration: unknown };
  capabilities: { untrustedWorkspaces: { restrictedConfigurations: unknown } };
}
const readManifest = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Manifest;

function generate(file: string) {
  return spawnSync(process.execPath, [GENERATOR, '--package', file], { encoding: 'utf8', timeout: 60_000 });
}

describe('settings: one declaration, package.json generated from it', () => {
  it("package.json's settings are exactly what settingsSchema.ts generates (run `npm run build` to regenerate)", () => {
    const m = readManifest(join(ROOT, 'package.json'));
    const expected = settingsContribution();
    assert.deepEqual(m.contributes.configuration, expected.configuration);
    assert.deepEqual(m.capabilities.untrustedWorkspaces.restrictedConfigurations, expected.restrictedConfigurations);
    // Same order too: the Settings editor lists them as declared.
    assert.equal(JSON.stringify(m.contributes.configuration), JSON.stringify(expected.configuration));
  });

  it('declares what the Settings editor and Restricted Mode need', () => {
    const { configuration, restrictedConfigurations } = settingsContribution();
    assert.deepEqual(Object.keys(configuration.properties), Object.values(SETTINGS));
    assert.deepEqual(restrictedConfigurations, [SETTINGS.agentCommand, SETTINGS.agentPreset, SETTINGS.worktreeLocation]);
    assert.deepEqual(configuration.properties[SETTINGS.maxParallelAgents], {
      type: ['integer', 'null'],
      default: null,
      minimum: 1,
      maximum: 32,
      markdownDescription: SETTING_DECLARATIONS.maxParallelAgents.markdownDescription,
    });
    assert.equal(configuration.properties[SETTINGS.agentCommand]!.scope, 'machine-overridable');
  });

  it("launchpad.agent.preset offers exactly the core's presets, in its order, with their titles, plus none", () => {
    assert.deepEqual(
      PRESET_CHOICES.map(([name, title]) => ({ name, title })),
      AGENT_PRESETS.map((p) => ({ name: p.name, title: p.title })),
    );
    const property = settingsContribution().configuration.properties[SETTINGS.agentPreset]!;
    assert.deepEqual(property.enum, ['', ...AGENT_PRESETS.map((p) => p.name)]);
    assert.equal((property.enumDescriptions as string[]).length, AGENT_PRESETS.length + 1);
    assert.equal(property.type, 'string');
  });

  it('the generator undoes a hand edit and leaves the rest of the file byte for byte', () => {
    const { configuration, restrictedConfigurations } = settingsContribution();
    const expected = readManifest(join(ROOT, 'package.json'));
    expected.contributes.configuration = configuration;
    expected.capabilities.untrustedWorkspaces.restrictedConfigurations = restrictedConfigurations;
    const expectedText = JSON.stringify(expected, null, 2) + '\n';

    const edited = JSON.parse(expectedText) as Manifest & {
      contributes: { configuration: { properties: Record<string, { default: unknown }> } };
    };
    edited.contributes.configuration.properties[SETTINGS.maxParallelAgents]!.default = 4;
    edited.capabilities.untrustedWorkspaces.restrictedConfigurations = [];
    const file = join(tempDir('launchpad-settings-'), 'package.json');
    writeFileSync(file, JSON.stringify(edited, null, 2) + '\n');

    const first = generate(file);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /settings regenerated/);
    assert.equal(readFileSync(file, 'utf8'), expectedText);

    const second = generate(file);
    assert.equal(second.status, 0, second.stderr);
    assert.equal(second.stdout, '', 'nothing to do the second time');
  });

  it('the generator refuses a package.json that is not JSON, naming it, and changes nothing', () => {
    const file = join(tempDir('launchpad-settings-'), 'package.json');
    writeFileSync(file, '{ "name": ');
    const r = generate(file);
    assert.equal(r.status, 1);
    assert.ok(r.stderr.includes(`${file}: not valid JSON`), r.stderr);
    assert.equal(readFileSync(file, 'utf8'), '{ "name": ');
  });
});

describe('settings validation (built from the declarations)', () => {
  it('keeps valid values', () => {
    const raw = { agentCommand: 'agent.sh', worktreeLocation: '../wt', maxParallelAgents: 32 };
    assert.deepEqual(parseSettings(raw), { settings: raw, invalid: [] });
    assert.deepEqual(parseSettings({}), { settings: {}, invalid: [] });
  });

  it('drops each invalid value and names it; the others stay', () => {
    for (const bad of [0, 33, 2.5, '4']) {
      const { settings, invalid } = parseSettings({ agentCommand: 'agent.sh', maxParallelAgents: bad });
      assert.deepEqual(settings, { agentCommand: 'agent.sh' }, String(bad));
      assert.deepEqual(
        invalid.map((i) => i.key),
        ['maxParallelAgents'],
      );
      assert.ok(invalid[0]!.message.length > 0);
    }
    const preset = parseSettings({ agentPreset: 'claude-code', agentCommand: 'agent.sh' });
    assert.deepEqual(preset.settings, { agentCommand: 'agent.sh' });
    assert.deepEqual(
      preset.invalid.map((i) => i.key),
      ['agentPreset'],
    );
    assert.deepEqual(parseSettings({ agentPreset: 'codex' }), { settings: { agentPreset: 'codex' }, invalid: [] });
    const { settings, invalid } = parseSettings({ agentCommand: 42, worktreeLocation: '/wt' });
    assert.deepEqual(settings, { worktreeLocation: '/wt' });
    assert.deepEqual(
      invalid.map((i) => i.key),
      ['agentCommand'],
    );
  });
});
