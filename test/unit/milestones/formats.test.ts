// The long-run file formats on literal text: state.md, milestone files and plans read back what
// they write, and every malformed file is refused with its file, line and field. The checks across
// files (references, cycles, impossible states) on a harness directory in a temp folder.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { loadLongRun } from '../../../src/core/milestones/longRun';
import { LongRunFormatError } from '../../../src/core/milestones/markdown';
import { formatMilestone, parseMilestone } from '../../../src/core/milestones/milestoneFile';
import { HarnessPaths } from '../../../src/core/milestones/paths';
import { clearAllTasks, inScope, parsePlan, scopesOverlap, setTaskDone } from '../../../src/core/milestones/planFile';
import { readVerdict } from '../../../src/core/milestones/reviewFile';
import { formatState, newMilestoneState, parseDuration, parseState } from '../../../src/core/milestones/stateFile';
import { tempDir } from '../helpers/tmp';

function refused(fn: () => unknown, re: RegExp): LongRunFormatError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof LongRunFormatError, `expected a LongRunFormatError, got ${String(err)}`);
    assert.match(err.message, re);
    return err;
  }
  assert.fail(`accepted, expected ${re}`);
}

const MILESTONE = `# M2: Render pages

## Goal
Render every page.

More detail on a second paragraph.

## Scope
- src/render/
- \`templates/page.html\`

## Success Criteria
- [ ] \`npm test -- render\` passes
- pages have titles

## Dependencies
- M1

## Interfaces
- src/render/index.ts: export function render(page: Page): string

## Notes
Anything else is for people.
`;

const STATE = `# Long Run: Site rebuild

- Overall Status: running
- Base Branch: main
- Started: 2025-07-01T10:00:00Z
- Completed: (none)

## Verification Strategy
- Command: \`npm run e2e\`
- Test Suite: \`npm test\`

## Agents
- Planner: \`claude -p "$(cat "$LAUNCHPAD_PROMPT_FILE")"\`
- Worker: (none)
- Reviewer: (none)

## Settings
- Max Parallel Milestones: 3
- Duration Guard: 1h30m
- Duration Guard Factor: 2.5

## Milestones

### M1: Parse
- Status: completed
- Attempts: 2
- Plan: docs/engineering-discipline/plans/2025-07-01-m1-parse.md
- Review: docs/engineering-discipline/reviews/2025-07-01-m1-parse-review-2.md
- Checkpoint: docs/engineering-discipline/harness/site/checkpoints/M1-checkpoint.md
- Started: 2025-07-01T10:00:00Z
- Completed: 2025-07-01T12:00:00Z

### M2: Render pages
- Status: integrating
- Attempts: 1
- Plan: docs/engineering-discipline/plans/2025-07-01-m2-render-pages.md
- Review: (none)
- Checkpoint: (none)
- Awaiting: integration
- Reason: npm run e2e failed
- Integration Fixes: 2
- Unblocked Despite: (none)

## Execution Log

- 2025-07-01T10:00:00Z [M1] gate check passed
- a note a person added
`;

describe('milestones: file formats', () => {
  it('a milestone file reads into its fields and writes back to the same milestone', () => {
    const m = parseMilestone(MILESTONE, 'milestones/M2-render.md');
    assert.equal(m.id, 'M2');
    assert.equal(m.name, 'Render pages');
    assert.equal(m.goal, 'Render every page.\n\nMore detail on a second paragraph.');
    assert.deepEqual(m.scope, ['src/render/', 'templates/page.html']);
    assert.deepEqual(m.criteria, ['`npm test -- render` passes', 'pages have titles']);
    assert.deepEqual(m.dependencies, ['M1']);
    assert.deepEqual(m.interfaces, [{ file: 'src/render/index.ts', signature: 'export function render(page: Page): string' }]);
    const { file: _f, ...def } = m;
    assert.deepEqual(parseMilestone(formatMilestone(def), 'x.md'), { ...m, file: 'x.md' });
  });

  it('a malformed milestone file names the file, line and section', () => {
    refused(() => parseMilestone('Render pages\n', 'm.md'), /^m\.md: no "# M<N>: Name" title line$/);
    refused(
      () => parseMilestone(MILESTONE.replace('# M2: Render pages', '# Milestone two'), 'm.md'),
      /^m\.md:1: title: expected "# M<N>: Name", got "# Milestone two"$/,
    );
    refused(() => parseMilestone(MILESTONE.replace('## Scope', '## Scopes'), 'm.md'), /^m\.md: Scope: missing "## Scope" section$/);
    refused(
      () => parseMilestone(MILESTONE.replace('- src/render/', 'src/render/'), 'm.md'),
      /^m\.md:9: Scope: expected a "- " list item, got "src\/render\/"$/,
    );
    refused(
      () => parseMilestone(MILESTONE.replace('- M1', '- the parser'), 'm.md'),
      /^m\.md:17: Dependencies: expected a milestone id: M followed by a number/,
    );
    refused(
      () => parseMilestone(MILESTONE.replace('- src/render/\n- `templates/page.html`', '- ../outside'), 'm.md'),
      /^m\.md:9: Scope: a scope entry is a path inside the repository/,
    );
    refused(
      () => parseMilestone(MILESTONE.replace(/## Success Criteria\n[^#]*/, '## Success Criteria\n\n'), 'm.md'),
      /Success Criteria: list at least one success criterion/,
    );
  });

  it('state.md reads into typed fields and is written back whole, the log unchanged', () => {
    const { state, lines } = parseState(STATE, 'state.md');
    assert.equal(state.name, 'Site rebuild');
    assert.equal(state.verification.command, 'npm run e2e');
    assert.equal(state.agents.planner, 'claude -p "$(cat "$LAUNCHPAD_PROMPT_FILE")"');
    assert.deepEqual(state.settings, { maxParallel: 3, guardMinimumSeconds: 5400, guardFactor: 2.5 });
    const m2 = state.milestones[1]!;
    assert.deepEqual([m2.status, m2.attempts, m2.awaiting, m2.integrationFixes, m2.review], ['integrating', 1, 'integration', 2, null]);
    assert.equal(lines.milestones.get('M2')!.status, 34);
    assert.deepEqual(
      state.log.map((e) => e.text),
      ['2025-07-01T10:00:00Z [M1] gate check passed', 'a note a person added'],
    );
    const again = parseState(
      formatState(
        state,
        new Map([
          ['M1', 'Parse'],
          ['M2', 'Render pages'],
        ]),
      ),
      'state.md',
    ).state;
    const withoutLines = (s: typeof state) => ({ ...s, log: s.log.map((e) => e.text) });
    assert.deepEqual(withoutLines(again), withoutLines(state));
  });

  it('a malformed state.md names the line and the field', () => {
    const bad = (from: string, to: string) => () => parseState(STATE.replace(from, to), 'h/state.md');
    refused(
      bad('# Long Run: Site rebuild', '# Site rebuild'),
      /^h\/state\.md:1: title: expected a first line "# Long Run: <session name>"$/,
    );
    refused(
      bad('- Status: integrating', '- Status: merging'),
      /^h\/state\.md:34: M2 Status: expected one of pending, planning, awaiting_approval, executing, validating, integrating, completed, failed, skipped \(got "merging"\)$/,
    );
    refused(bad('- Attempts: 2', '- Attempts: two'), /^h\/state\.md:26: M1 Attempts: expected a whole number \(got "two"\)$/);
    refused(bad('- Attempts: 2', '- Atempts: 2'), /^h\/state\.md:26: Atempts: unknown field; expected one of Status, Attempts/);
    refused(
      bad('- Duration Guard: 1h30m', '- Duration Guard: soon'),
      /^h\/state\.md:19: Duration Guard: expected a duration such as 2h, 90m, 1h30m or 45s \(got "soon"\)$/,
    );
    refused(
      bad('## Settings', '## Setings'),
      /^h\/state\.md:17: Setings: unknown section; expected one of Verification Strategy, Agents, Settings, Milestones, Execution Log$/,
    );
    refused(bad('### M2: Render pages', '### Two'), /^h\/state\.md:33: Two: expected "### M<N>" or "### M<N>: Name"$/);
    refused(
      bad('- Started: 2025-07-01T10:00:00Z\n- Completed: 2025-07-01T12:00:00Z', '- Started: yesterday'),
      /M1 Started: expected a date and time/,
    );
    refused(bad('### M2: Render pages', '### M1: Again'), /^h\/state\.md:33: M1: milestone given twice \(also line 24\)$/);
    refused(
      bad('- Overall Status: running', '- Overall Status: running\n- Overall Status: paused'),
      /^h\/state\.md:4: Overall Status: given twice \(also line 3\)$/,
    );
  });

  it('a plan reads its tasks, fields and boxes; ticking changes only the box', () => {
    const plan = `# Plan: M1

Free text for people. <!-- - [ ] T9 not a task -->

## Tasks

- [x] T1 Write the parser
  - Files: src/parse.ts, src/lex.ts
  - Validate: \`npm test -- parse\`
  - Timeout: 300
- [ ] T2 Document it
  - Depends: T1
  - Validate: \`test -f docs/parse.md\`
  - Context: explain the grammar
    and the error messages
`;
    const tasks = parsePlan(plan, 'p.md');
    assert.deepEqual(
      tasks.map((t) => [t.id, t.title, t.done, t.files, t.validate, t.depends, t.timeout, t.context, t.line]),
      [
        ['T1', 'Write the parser', true, ['src/parse.ts', 'src/lex.ts'], 'npm test -- parse', [], 300, undefined, 7],
        ['T2', 'Document it', false, [], 'test -f docs/parse.md', ['T1'], undefined, 'explain the grammar\nand the error messages', 11],
      ],
    );
    const ticked = setTaskDone(plan, 'T2', true);
    assert.equal(ticked, plan.replace('- [ ] T2', '- [x] T2'));
    assert.equal(clearAllTasks(ticked), plan.replace('- [x] T1', '- [ ] T1'));
  });

  it('a malformed plan names the line and the task', () => {
    const base = '## Tasks\n\n- [ ] T1 One\n  - Validate: `true`\n- [ ] T2 Two\n  - Validate: `true`\n  - Depends: T1\n';
    refused(() => parsePlan('# Plan\n- [ ] T1 x\n', 'p.md'), /^p\.md: Tasks: no "## Tasks" section$/);
    refused(
      () => parsePlan('## Tasks\n\n- [ ] T1 One\n', 'p.md'),
      /^p\.md:3: T1 validate: every task needs a validation command|^p\.md:3: T1 validate: expected string/,
    );
    refused(() => parsePlan(base.replace('Depends: T1', 'Depends: T7'), 'p.md'), /^p\.md:5: T2 Depends: no task T7 in this plan$/);
    refused(
      () => parsePlan(base.replace('- [ ] T1 One\n  - Validate: `true`', '- [ ] T1 One\n  - Validate: `true`\n  - Depends: T2'), 'p.md'),
      /dependency cycle: T1 → T2 → T1|dependency cycle: T2 → T1 → T2/,
    );
    refused(() => parsePlan(base.replace('- [ ] T2 Two', '- [ ] T1 Two'), 'p.md'), /^p\.md:5: T1: task id used twice \(also line 3\)$/);
    refused(() => parsePlan(base.replace('  - Depends: T1', '  - Owner: me'), 'p.md'), /^p\.md:7: Owner: unknown task field/);
    refused(
      () => parsePlan(base.replace('  - Depends: T1', 'some prose'), 'p.md'),
      /^p\.md:7: Tasks: expected "- \[ \] T<n> title" or an indented "- Field: value", got "some prose"$/,
    );
    refused(() => parsePlan(base.replace('T2 Two', 'Task2 Two'), 'p.md'), /^p\.md:5: Task2 id: expected a task id T1, T2/);
    refused(() => parsePlan(base.replace('  - Depends: T1', '  - Timeout: soon'), 'p.md'), /^p\.md:5: T2 timeout: /);
  });

  it('the verdict is the last VERDICT line; scopes overlap by file or folder', () => {
    assert.equal(readVerdict('VERDICT: FAIL\nfixed later\n**VERDICT: PASS**\n'), 'PASS');
    assert.equal(readVerdict('The verdict: PASS\nVERDICT: maybe\n'), undefined);
    assert.ok(inScope('src/a/b.ts', ['src/a/']));
    assert.ok(!inScope('src/ab.ts', ['src/a']));
    assert.ok(scopesOverlap(['src/'], ['src/a/b.ts']));
    assert.ok(!scopesOverlap(['src/a/'], ['src/b/']));
    assert.equal(parseDuration('1h30m'), 5400);
  });

  it("docs/milestones.md's examples of the three formats read as they say", () => {
    const readme = readFileSync(join(__dirname, '../../../../docs/milestones.md'), 'utf8');
    const block = (after: string) => /```markdown\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf(after)))![1]!;
    const { state } = parseState(block('## state.md'), 'README state.md');
    assert.deepEqual(
      [state.name, state.overall.baseBranch, state.milestones[0]!.status, state.milestones[0]!.attempts],
      ['Site rebuild', 'main', 'executing', 1],
    );
    const m = parseMilestone(block('## Milestone files'), 'README milestone');
    assert.deepEqual([m.id, m.dependencies, m.interfaces.length], ['M2', ['M1'], 1]);
    const tasks = parsePlan(block('## Plans, reviews, checkpoints'), 'README plan');
    assert.deepEqual(
      tasks.map((t) => [t.id, t.depends, t.timeout]),
      [
        ['T1', [], undefined],
        ['T2', ['T1'], 300],
      ],
    );
  });

  describe('a harness directory as a whole', () => {
    const harness = (milestones: Record<string, string>, state: (s: string) => string = (s) => s) => {
      const top = tempDir('launchpad-ms-format-');
      const dir = join(top, 'docs/engineering-discipline/harness/h');
      mkdirSync(join(dir, 'milestones'), { recursive: true });
      const entries = Object.keys(milestones).map((id) => `### ${id}\n- Status: pending\n- Attempts: 0\n`);
      writeFileSync(
        join(dir, 'state.md'),
        state(`# Long Run: h\n\n- Overall Status: pending\n\n## Milestones\n\n${entries.join('\n')}\n## Execution Log\n`),
      );
      for (const [id, deps] of Object.entries(milestones)) {
        writeFileSync(
          join(dir, 'milestones', `${id}-x.md`),
          `# ${id}: X\n\n## Goal\nG\n\n## Scope\n- src/${id}/\n\n## Success Criteria\n- ok\n\n## Dependencies\n${deps || '- (none)'}\n`,
        );
      }
      return new HarnessPaths(dir, top);
    };
    const P = 'docs/engineering-discipline/harness/h';

    it('loads; a milestone file not in state.md yet is added as pending', () => {
      const run = loadLongRun(harness({ M1: '', M2: '- M1' }, (s) => s.replace(/### M2\n[^#]*/, '')));
      assert.deepEqual(run.added, ['M2']);
      assert.deepEqual(
        run.state.milestones.map((m) => m.id),
        ['M1', 'M2'],
      );
      assert.deepEqual(run.state.milestones[1], newMilestoneState('M2'));
    });

    it('refuses a dependency on a milestone without a file, a cycle, and a state.md entry without a file', () => {
      refused(
        () => loadLongRun(harness({ M1: '- M9' })),
        new RegExp(`^${P}/milestones/M1-x\\.md: Dependencies: M1 depends on M9, which has no milestone file$`),
      );
      refused(() => loadLongRun(harness({ M1: '- M3', M2: '- M1', M3: '- M2' })), /Dependencies: dependency cycle: M1 → M3 → M2 → M1$/);
      refused(
        () => loadLongRun(harness({ M1: '' }, (s) => s.replace('## Execution Log', '### M4\n- Status: pending\n\n## Execution Log'))),
        new RegExp(`^${P}/state\\.md:\\d+: M4: no milestone file with this id in ${P}/milestones/$`),
      );
    });

    it('refuses impossible states: executing without a plan, completed without a checkpoint, a duration decision while validating', () => {
      refused(
        () => loadLongRun(harness({ M1: '' }, (s) => s.replace('- Status: pending\n- Attempts: 0', '- Status: executing\n- Attempts: 1'))),
        new RegExp(`^${P}/state\\.md:8: M1 Status: "executing" without a plan file \\(Plan is empty\\)$`),
      );
      refused(
        () =>
          loadLongRun(
            harness({ M1: '' }, (s) =>
              s.replace('- Status: pending\n- Attempts: 0', '- Status: executing\n- Attempts: 1\n- Plan: docs/plans/gone.md'),
            ),
          ),
        /M1 Plan: "executing" but the plan file docs\/plans\/gone\.md does not exist$/,
      );
      refused(
        () => loadLongRun(harness({ M1: '' }, (s) => s.replace('- Status: pending', '- Status: completed'))),
        /M1 Checkpoint: "completed" without its checkpoint file$/,
      );
      refused(
        () => loadLongRun(harness({ M1: '' }, (s) => s.replace('- Status: pending', '- Status: pending\n- Awaiting: duration'))),
        /M1 Awaiting: a duration decision is only awaited while "planning" or "executing" \(status is "pending"\)$/,
      );
      refused(
        () =>
          loadLongRun(
            harness({ M1: '', M2: '- M1' }, (s) =>
              s.replace('### M2\n- Status: pending', '### M2\n- Status: pending\n- Unblocked Despite: M1'),
            ),
          ),
        /M2 Unblocked Despite: M1 is "pending", not skipped or failed$/,
      );
    });
  });
});
