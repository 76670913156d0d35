// `launchpad agents`: the presets, which are installed (found on PATH, with their --version,
// a probe that does not answer cut off), and the exact command each would run.
import assert from 'node:assert/strict';

import { AGENT_PRESETS, presetCommand } from '../../../src/core/agents/presets';
import { compareVersions, dottedVersion } from '../../../src/core/agents/probe';
import { harness, launchpad, show, tempDir } from '../controller/support';
import { installFake } from './fakeAgents';

interface Row {
  name: string;
  installed: boolean;
  path: string | null;
  version: string | null;
  version_error: string | null;
  proven_version: string | null;
  newer_than_proven: boolean;
  command: string;
  docs: string[];
}

describe('launchpad agents', function () {
  this.timeout(60_000);

  it('--json: installed ones with their version and path, the others not found, every command exact; a hanging --version is cut off', async () => {
    const bin = tempDir('launchpad-fake-bin-');
    installFake(bin, 'claude', { output: '', version: '2.1.140 (Claude Code)' });
    installFake(bin, 'aider', { output: '', version: 'aider 0.86.1' });
    installFake(bin, 'gemini', { output: '', hangOnVersion: true });
    const cwd = tempDir();
    // Only the fakes on PATH: whatever is installed on this machine is not looked at.
    const r = await launchpad(cwd, ['agents', '--json'], { PATH: bin });
    assert.equal(r.code, 0, show(r));
    const rows = (JSON.parse(r.stdout) as { agents: Row[] }).agents;
    assert.deepEqual(
      rows.map((a) => a.name),
      AGENT_PRESETS.map((p) => p.name),
    );
    const by = (name: string) => rows.find((a) => a.name === name)!;

    const claude = by('claude');
    assert.deepEqual(
      [claude.installed, claude.path, claude.version, claude.version_error],
      [true, `${bin}/claude`, '2.1.140 (Claude Code)', null],
    );
    assert.equal(by('aider').version, 'aider 0.86.1');
    assert.equal(by('gemini').installed, true);
    assert.equal(by('gemini').version, null);
    assert.match(by('gemini').version_error!, /no answer to --version within 5 s/);
    for (const name of ['codex', 'opencode', 'cursor-agent', 'copilot']) {
      assert.equal(by(name).installed, false, name);
      assert.equal(by(name).path, null, name);
    }
    assert.equal(by('claude').command, 'claude -p --output-format stream-json --verbose --dangerously-skip-permissions');
    assert.equal(by('codex').command, 'codex exec --json --dangerously-bypass-approvals-and-sandbox -');
    assert.equal(
      by('copilot').command,
      'copilot --allow-all-tools --allow-all-paths --no-ask-user --output-format json -p "$(cat "$LAUNCHPAD_PROMPT_FILE")" ' +
        '--usage-output-file "$LAUNCHPAD_PROMPT_FILE.usage.json" </dev/null; ' +
        's=$?; tr -d \'\\n\' <"$LAUNCHPAD_PROMPT_FILE.usage.json" 2>/dev/null && echo; exit $s',
    );
    for (const row of rows) assert.ok(row.docs.length > 0 && row.docs.every((u) => u.startsWith('https://')), row.name);
    assert.equal(r.stderr, '');
  });

  it('shows the extra arguments of session_config.agent_args; the text form names what is installed', async () => {
    const bin = tempDir('launchpad-fake-bin-');
    installFake(bin, 'codex', { output: '', version: 'codex-cli 0.152.0' });
    const root = harness({ tasks: [], sessionConfig: { agent_args: { codex: ['--model', 'o3 mini'] } } });
    const json = await launchpad(root, ['agents', '--json'], { PATH: bin });
    const codex = (JSON.parse(json.stdout) as { agents: Row[] }).agents.find((a) => a.name === 'codex')!;
    assert.equal(
      codex.command,
      presetCommand(
        AGENT_PRESETS.find((p) => p.name === 'codex')!,
        ['--model', 'o3 mini'],
      ),
    );
    assert.equal(codex.command, "codex exec --json --dangerously-bypass-approvals-and-sandbox --model 'o3 mini' -");

    const text = await launchpad(root, ['agents'], { PATH: bin });
    assert.equal(text.code, 0, show(text));
    const proven = AGENT_PRESETS.find((p) => p.name === 'codex')!.proven!.version;
    assert.match(text.stdout, new RegExp(`^codex +OpenAI Codex CLI: codex-cli 0\\.152\\.0 at ${bin}/codex; proven with ${proven}$`, 'm'));
    assert.match(text.stdout, /^claude +Claude Code: not found on PATH$/m);
    assert.ok(text.stdout.includes(`  codex exec --json --dangerously-bypass-approvals-and-sandbox --model 'o3 mini' -\n`));
  });

  it('each installed version beside the proven one; a newer one warned about, an older or equal one not, none proven said so', async () => {
    const proven = (name: string) => AGENT_PRESETS.find((p) => p.name === name)!.proven!.version;
    const bump = (v: string) => v.replace(/\d+$/, (n) => String(Number(n) + 1));
    const bin = tempDir('launchpad-fake-bin-');
    installFake(bin, 'claude', { output: '', version: `${bump(proven('claude'))} (Claude Code)` });
    installFake(bin, 'codex', { output: '', version: `codex-cli ${proven('codex')}` });
    installFake(bin, 'aider', { output: '', version: 'aider 99.0.0' });
    const json = await launchpad(tempDir(), ['agents', '--json'], { PATH: bin });
    const rows = (JSON.parse(json.stdout) as { agents: Row[] }).agents;
    const by = (name: string) => rows.find((a) => a.name === name)!;
    assert.deepEqual(
      ['claude', 'codex', 'aider', 'copilot'].map((n) => [n, by(n).proven_version, by(n).newer_than_proven]),
      [
        ['claude', proven('claude'), true],
        ['codex', proven('codex'), false],
        ['aider', null, false],
        ['copilot', proven('copilot'), false],
      ],
    );

    const text = await launchpad(tempDir(), ['agents'], { PATH: bin });
    assert.equal(text.code, 0, show(text));
    const warnings = text.stdout.split('\n').filter((l) => l.includes('warning:'));
    assert.deepEqual(warnings, [
      `${' '.repeat('cursor-agent'.length + 2)}warning: newer than ${proven('claude')}, the version this preset was proven with: its flags or output may have changed`,
    ]);
    assert.match(text.stdout, /^aider +Aider: aider 99\.0\.0 at \S+; no version proven$/m);
  });

  it('dotted versions: found in the --version line, compared as numbers', () => {
    assert.equal(dottedVersion('2.1.140 (Claude Code)'), '2.1.140');
    assert.equal(dottedVersion('codex-cli 0.152.0'), '0.152.0');
    assert.equal(dottedVersion('GitHub Copilot CLI 1.0.102.'), '1.0.102');
    assert.equal(dottedVersion('no number here'), undefined);
    assert.ok(compareVersions('0.10.0', '0.9.9') > 0);
    assert.ok(compareVersions('1.0', '1.0.1') < 0);
    assert.equal(compareVersions('2.1.0', '2.1'), 0);
  });
});
