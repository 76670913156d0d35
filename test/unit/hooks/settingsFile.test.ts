// Launchpad's hooks merged into an agent's settings file, on literal texts: every other key and
// hook kept, one entry per event however often installed, --remove taking out only ours, and
// unreadable files refused with the line or the field named.
import assert from 'node:assert/strict';

import { editHookSettings } from '../../../src/core/hooks/settingsFile';
import { InputError } from '../../../src/core/inputError';

const install = { remove: false, commandPrefix: 'launchpad' };
const remove = { remove: true, commandPrefix: 'launchpad' };

/** A project's Claude Code settings with hooks of its own on the same events. */
const CLAUDE_SETTINGS = `{
    "permissions": { "allow": ["Bash(npm test:*)"] },
    "hooks": {
        "Stop": [
            { "hooks": [ { "type": "command", "command": "./scripts/notify.sh" } ] }
        ],
        "SessionStart": [
            { "matcher": "startup", "hooks": [ { "type": "command", "command": "echo hello" } ] }
        ],
        "PreToolUse": [
            { "matcher": "Bash", "hooks": [ { "type": "command", "command": "./guard.sh", "timeout": 5 } ] }
        ]
    },
    "model": "opus"
}
`;

function edit(agent: Parameters<typeof editHookSettings>[0], text: string | undefined, opts = install) {
  return editHookSettings(agent, text, opts, 'settings.json');
}

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof InputError, String(e));
    return e;
  }
  assert.fail('no InputError');
}

describe('hooks/settingsFile', () => {
  it('creates the Claude Code settings with one SessionStart and one Stop hook', () => {
    const r = edit('claude', undefined);
    assert.equal(r.changed, true);
    assert.deepEqual(JSON.parse(r.text), {
      hooks: {
        SessionStart: [{ hooks: [{ type: 'command', command: 'launchpad hook session-start --agent claude', timeout: 30 }] }],
        Stop: [{ hooks: [{ type: 'command', command: 'launchpad hook stop --agent claude', timeout: 30 }] }],
      },
    });
    assert.ok(r.text.endsWith('}\n'));
  });

  it("merges into existing settings: every other key and hook entry kept, ours appended, the file's indentation kept", () => {
    const r = edit('claude', CLAUDE_SETTINGS);
    const before = JSON.parse(CLAUDE_SETTINGS);
    const after = JSON.parse(r.text);
    assert.deepEqual(after.permissions, before.permissions);
    assert.equal(after.model, 'opus');
    assert.deepEqual(after.hooks.PreToolUse, before.hooks.PreToolUse);
    assert.deepEqual(after.hooks.Stop.slice(0, 1), before.hooks.Stop);
    assert.deepEqual(after.hooks.SessionStart.slice(0, 1), before.hooks.SessionStart);
    assert.deepEqual(after.hooks.Stop[1], { hooks: [{ type: 'command', command: 'launchpad hook stop --agent claude', timeout: 30 }] });
    assert.equal(after.hooks.Stop.length, 2);
    assert.deepEqual(Object.keys(after), ['permissions', 'hooks', 'model']);
    assert.match(r.text, /^\{\n {4}"permissions"/);
  });

  it('is idempotent: installing again changes nothing and leaves one entry per event', () => {
    const once = edit('claude', CLAUDE_SETTINGS).text;
    const twice = edit('claude', once);
    assert.equal(twice.changed, false);
    assert.equal(twice.text, once);
    const parsed = JSON.parse(once);
    for (const event of ['Stop', 'SessionStart']) {
      const ours = parsed.hooks[event]
        .flatMap((g: { hooks: Array<{ command: string }> }) => g.hooks)
        .filter((h: { command: string }) => h.command.includes('launchpad hook'));
      assert.equal(ours.length, 1, event);
    }
  });

  it("keeps a person's changes to our entry (a timeout) when installing again with the same command", () => {
    const tuned = edit('claude', undefined).text.replace('"timeout": 30', '"timeout": 90');
    assert.equal(edit('claude', tuned).changed, false);
  });

  it('a different --command replaces our entry instead of adding a second one', () => {
    const first = edit('claude', CLAUDE_SETTINGS).text;
    const r = edit('claude', first, { remove: false, commandPrefix: 'node /opt/launchpad/dist/cli.js' });
    const stop = JSON.parse(r.text).hooks.Stop;
    assert.equal(stop.length, 2);
    assert.equal(stop[1].hooks[0].command, 'node /opt/launchpad/dist/cli.js hook stop --agent claude');
  });

  it('--remove takes out only ours and gives back the original settings', () => {
    const installed = edit('claude', CLAUDE_SETTINGS).text;
    const r = edit('claude', installed, remove);
    assert.equal(r.changed, true);
    assert.deepEqual(JSON.parse(r.text), JSON.parse(CLAUDE_SETTINGS));
    assert.equal(edit('claude', r.text, remove).changed, false, 'removing again changes nothing');
  });

  it('--remove of hooks in a file that had none leaves no empty hooks object behind', () => {
    const installed = edit('claude', '{ "model": "opus" }\n').text;
    assert.deepEqual(JSON.parse(edit('claude', installed, remove).text), { model: 'opus' });
  });

  it('our handler sharing a group with another handler: only ours goes, the group stays', () => {
    const shared = JSON.stringify({
      hooks: {
        Stop: [
          {
            hooks: [
              { type: 'command', command: 'launchpad hook stop --agent claude' },
              { type: 'command', command: './after.sh' },
            ],
          },
        ],
      },
    });
    const r = JSON.parse(edit('claude', shared, remove).text);
    assert.deepEqual(r.hooks.Stop, [{ hooks: [{ type: 'command', command: './after.sh' }] }]);
  });

  it('recognises our entries whatever runs launchpad, and only for the agent named', () => {
    const text = JSON.stringify({
      hooks: {
        Stop: [
          { hooks: [{ type: 'command', command: 'npx launchpad hook stop --agent claude' }] },
          { hooks: [{ type: 'command', command: 'launchpad hook stop --agent codex' }] },
          { hooks: [{ type: 'command', command: 'echo launchpad hook stop --agent claude-ish' }] },
        ],
      },
    });
    const r = JSON.parse(edit('claude', text, remove).text);
    assert.deepEqual(
      r.hooks.Stop.map((g: { hooks: Array<{ command: string }> }) => g.hooks[0]!.command),
      ['launchpad hook stop --agent codex', 'echo launchpad hook stop --agent claude-ish'],
    );
  });

  it('Codex: .codex/hooks.json has the same shape as Claude Code', () => {
    const r = JSON.parse(edit('codex', undefined).text);
    assert.deepEqual(Object.keys(r.hooks), ['SessionStart', 'Stop']);
    assert.equal(r.hooks.Stop[0].hooks[0].command, 'launchpad hook stop --agent codex');
  });

  it('Gemini CLI: SessionStart and AfterAgent, named hooks, timeouts in milliseconds, other settings kept', () => {
    const r = JSON.parse(edit('gemini', '{\n  "theme": "GitHub",\n  "hooksConfig": { "enabled": true }\n}\n').text);
    assert.equal(r.theme, 'GitHub');
    assert.deepEqual(r.hooksConfig, { enabled: true });
    assert.deepEqual(r.hooks.SessionStart, [
      {
        hooks: [
          { name: 'launchpad-session-start', type: 'command', command: 'launchpad hook session-start --agent gemini', timeout: 30000 },
        ],
      },
    ]);
    assert.equal(r.hooks.AfterAgent[0].hooks[0].command, 'launchpad hook stop --agent gemini');
    assert.equal(r.hooks.Stop, undefined);
  });

  it('Cursor: version 1 and flat lists of handlers, other handlers kept', () => {
    const text = '{\n\t"version": 1,\n\t"hooks": {\n\t\t"stop": [{ "command": "./audit.sh", "loop_limit": 3 }]\n\t}\n}\n';
    const r = edit('cursor', text);
    const parsed = JSON.parse(r.text);
    assert.deepEqual(parsed.hooks.stop, [{ command: './audit.sh', loop_limit: 3 }, { command: 'launchpad hook stop --agent cursor' }]);
    assert.deepEqual(parsed.hooks.sessionStart, [{ command: 'launchpad hook session-start --agent cursor' }]);
    assert.match(r.text, /^\{\n\t"version": 1,/);
    assert.deepEqual(Object.keys(JSON.parse(edit('cursor', undefined).text)), ['version', 'hooks']);
    assert.deepEqual(JSON.parse(edit('cursor', r.text, remove).text), JSON.parse(text));
  });

  describe('refuses what it cannot read, naming the line or the field', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['a trailing comma', '{\n  "hooks": {},\n}\n', /^settings\.json: line 3, column 1: trailing comma before '\}'; nothing was changed$/],
      ['comments', '{\n  // mine\n  "model": "opus"\n}\n', /^settings\.json: line 2, column 3: comments are not allowed in JSON/],
      ['an array at the top', '[]\n', /^settings\.json: expected a JSON object at the top level/],
      ['hooks not an object', '{ "hooks": [] }', /^settings\.json: field "hooks" must be an object/],
      ['an event not a list', '{ "hooks": { "Stop": {} } }', /^settings\.json: field "hooks\.Stop" must be a list/],
      [
        'a group not an object',
        '{ "hooks": { "SessionStart": ["x"] } }',
        /^settings\.json: field "hooks\.SessionStart\[0\]" must be an object/,
      ],
      [
        "a group's hooks not a list",
        '{ "hooks": { "Stop": [{ "hooks": "x" }] } }',
        /^settings\.json: field "hooks\.Stop\[0\]\.hooks" must be a list/,
      ],
    ];
    for (const [what, text, message] of cases) {
      it(what, () => {
        assert.match(inputError(() => edit('claude', text)).message, message);
        assert.match(inputError(() => edit('claude', text, remove)).message, message);
      });
    }
  });

  it('an empty file is taken as no settings yet', () => {
    assert.equal(JSON.parse(edit('claude', '\n').text).hooks.Stop.length, 1);
  });
});
