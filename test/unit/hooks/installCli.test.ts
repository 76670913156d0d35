// `launchpad hooks install AGENT [--remove]` through the built CLI, on settings files that hold
// other hooks: merged, idempotent, removed cleanly, refused unchanged when unreadable; and the
// installed command, run as the agent runs it, answers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { agentHooksInstalled } from '../../../src/core/hooks/settingsFile';
import { cli } from '../cli/util';
import { CLI } from '../helpers/cli';
import { makeHarness } from '../helpers/harness';
import { tempDir } from '../helpers/tmp';

const OTHER_SETTINGS = `{
  "permissions": {
    "allow": ["Bash(npm test:*)"]
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [{ "type": "command", "command": "./scripts/notify.sh" }]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{ "type": "command", "command": "npx prettier --write" }]
      }
    ]
  }
}
`;

function harness(): string {
  const root = makeHarness({ tasks: [{ id: 'task-001', title: 'Write the parser', validate: 'test -f src/parser.ts' }] });
  writeFileSync(join(root, '.harness-active'), '');
  return root;
}

function settingsOf(
  root: string,
  file = '.claude/settings.json',
): { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> } & Record<string, unknown> {
  return JSON.parse(readFileSync(join(root, file), 'utf8'));
}

describe('launchpad hooks install (through dist/cli.js)', function () {
  this.timeout(60_000);

  it('merges into an existing .claude/settings.json with other hooks; twice gives one entry; --remove restores it', () => {
    const root = harness();
    mkdirSync(join(root, '.claude'));
    writeFileSync(join(root, '.claude', 'settings.json'), OTHER_SETTINGS);

    assert.equal(cli(['hooks', 'install', 'claude'], { cwd: root }).stdout, 'claude: hooks installed in .claude/settings.json\n');
    const once = readFileSync(join(root, '.claude', 'settings.json'), 'utf8');
    const s = settingsOf(root);
    assert.deepEqual(s.permissions, { allow: ['Bash(npm test:*)'] });
    assert.deepEqual(s.hooks.PostToolUse, JSON.parse(OTHER_SETTINGS).hooks.PostToolUse);
    assert.deepEqual(
      s.hooks.Stop!.map((g) => g.hooks.map((h) => h.command)),
      [['./scripts/notify.sh'], ['launchpad hook stop --agent claude']],
    );
    assert.deepEqual(
      s.hooks.SessionStart!.map((g) => g.hooks.map((h) => h.command)),
      [['launchpad hook session-start --agent claude']],
    );

    assert.equal(cli(['hooks', 'install', 'claude'], { cwd: root }).stdout, 'claude: hooks already installed in .claude/settings.json\n');
    assert.equal(readFileSync(join(root, '.claude', 'settings.json'), 'utf8'), once, 'installing twice changed the file');

    assert.equal(
      cli(['hooks', 'install', 'claude', '--remove'], { cwd: root }).stdout,
      'claude: hooks removed from .claude/settings.json\n',
    );
    assert.deepEqual(settingsOf(root), JSON.parse(OTHER_SETTINGS));
    assert.equal(
      cli(['hooks', 'install', 'claude', '--remove'], { cwd: root }).stdout,
      'claude: no Launchpad hooks in .claude/settings.json\n',
    );
  });

  it('several agents at once, each in its own file, in the state root found upward (or --dir)', () => {
    const root = harness();
    mkdirSync(join(root, 'src'));
    const r = cli(['hooks', 'install', 'codex', 'gemini', 'cursor'], { cwd: join(root, 'src') });
    assert.equal(r.stdout.split('\n').filter(Boolean).length, 3);
    assert.equal(settingsOf(root, '.codex/hooks.json').hooks.Stop![0]!.hooks[0]!.command, 'launchpad hook stop --agent codex');
    assert.equal(settingsOf(root, '.gemini/settings.json').hooks.AfterAgent![0]!.hooks[0]!.command, 'launchpad hook stop --agent gemini');
    assert.equal(settingsOf(root, '.cursor/hooks.json').version, 1);
    const other = harness();
    cli(['--dir', other, 'hooks', 'install', 'claude'], { cwd: tempDir() });
    assert.ok(existsSync(join(other, '.claude', 'settings.json')));
  });

  it("--json: each agent's settings file and whether it changed", () => {
    const root = harness();
    const installed = JSON.parse(cli(['hooks', 'install', 'claude', 'gemini', '--json'], { cwd: root }).stdout) as unknown;
    assert.deepEqual(installed, {
      agents: [
        { agent: 'claude', file: join(root, '.claude', 'settings.json'), changed: true },
        { agent: 'gemini', file: join(root, '.gemini', 'settings.json'), changed: true },
      ],
    });
    const again = JSON.parse(cli(['hooks', 'install', 'claude', '--remove', '--json'], { cwd: root }).stdout) as unknown;
    assert.deepEqual(again, { agents: [{ agent: 'claude', file: join(root, '.claude', 'settings.json'), changed: true }] });
    assert.deepEqual([agentHooksInstalled(root, 'claude'), agentHooksInstalled(root, 'gemini')], [false, true]);
  });

  it('an unreadable settings file: exit 2 naming the file and the line, the file left as it was', () => {
    const root = harness();
    mkdirSync(join(root, '.claude'));
    const broken = '{\n  "hooks": {\n    "Stop": []\n  },\n}\n';
    writeFileSync(join(root, '.claude', 'settings.json'), broken);
    const r = cli(['hooks', 'install', 'claude'], { cwd: root }, 2);
    assert.match(r.stderr, /^launchpad: \.claude\/settings\.json: line 5, column 1: trailing comma before '\}'; nothing was changed\n$/);
    assert.equal(readFileSync(join(root, '.claude', 'settings.json'), 'utf8'), broken);
  });

  it('usage errors: an unknown agent or action changes nothing', () => {
    const root = harness();
    assert.match(
      cli(['hooks', 'install', 'claude', 'copilot'], { cwd: root }, 2).stderr,
      /unknown agent "copilot"; agents: claude, codex, gemini, cursor/,
    );
    assert.match(cli(['hooks', 'uninstall', 'claude'], { cwd: root }, 2).stderr, /unknown action "uninstall"/);
    assert.match(cli(['hooks', 'install'], { cwd: root }, 2).stderr, /expected 2 to 5 arguments, got 1/);
    assert.ok(!existsSync(join(root, '.claude')));
  });

  it('the installed command, run through a shell as the agent runs it, answers the agent', () => {
    const root = harness();
    cli(['hooks', 'install', 'claude', '--command', `"${process.execPath}" "${CLI}"`], { cwd: root });
    const command = settingsOf(root).hooks.Stop![0]!.hooks[0]!.command;
    const input = JSON.stringify({
      session_id: 'installed',
      transcript_path: '/tmp/t.jsonl',
      cwd: root,
      hook_event_name: 'Stop',
      stop_hook_active: false,
    });
    const r = spawnSync('sh', ['-c', command], {
      cwd: root,
      input,
      encoding: 'utf8',
      env: { ...process.env, HARNESS_STATE_ROOT: '', LAUNCHPAD_TASK_ID: '' },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).decision, 'block');
  });
});
