// `launchpad agents`: the presets, which are installed (found on PATH, with their --version,
// a probe that does not answer cut off), and the exact command each would run.
import assert from 'node:assert/strict';

import { AGENT_PRESETS, presetCommand } from '../../../src/core/agents/presets';
import { harness, launchpad, show, tempDir } from '../controller/support';
import { installFake } from './fakeAgents';

interface Row {
  name: string;
  installed: boolean;
  path: string | null;
  version: string | null;
  version_error: string | null;
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
    assert.match(text.stdout, new RegExp(`^codex +OpenAI Codex CLI: codex-cli 0\\.152\\.0 at ${bin}/codex$`, 'm'));
    assert.match(text.stdout, /^claude +Claude Code: not found on PATH$/m);
    assert.ok(text.stdout.includes(`  codex exec --json --dangerously-bypass-approvals-and-sandbox --model 'o3 mini' -\n`));
  });
});
