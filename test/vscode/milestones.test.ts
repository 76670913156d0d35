// The Milestones view and its gates in the host: a long run of two milestones (M2 after M1) made
// with the CLI in the workspace, run with the scripted agents of test/fixtures/milestones. The run
// stops at each plan gate with a notification; Approve Plan opens the plan beside and the run goes
// on; a rejected plan is planned again; the view ends with every milestone's files linked.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

import * as vscode from 'vscode';

import { COMMANDS, VIEWS } from '../../src/vscode/contributions';
import type { LaunchpadApi } from '../../src/vscode/extension';
import type { MilestoneNode } from '../../src/vscode/milestones/milestonesProvider';
import { requestScreenshot } from './host';
import { cli, eventually, git, launchpad, tooltipText, workspaceRoot } from './launchpad';

const FIXTURES = path.resolve(__dirname, '../../../test/fixtures/milestones');

interface Shown {
  node: MilestoneNode;
  item: vscode.TreeItem;
  children: Shown[];
}

async function shown(api: LaunchpadApi, parent?: MilestoneNode, depth = 3): Promise<Shown[]> {
  const p = api.milestones.provider;
  const nodes = await p.getChildren(parent);
  return Promise.all(
    nodes.map(async (node) => ({ node, item: p.getTreeItem(node), children: depth > 1 ? await shown(api, node, depth - 1) : [] })),
  );
}

const label = (s: Shown) => (typeof s.item.label === 'string' ? s.item.label : (s.item.label?.label ?? ''));

async function milestone(api: LaunchpadApi, id: string): Promise<Shown | undefined> {
  const [session] = await shown(api);
  return session?.children.find((c) => c.node.kind === 'milestone' && c.node.id === id);
}

async function runEnded(api: LaunchpadApi): Promise<void> {
  const active = api.milestones.longRuns.active;
  if (active) await active.done;
}

describe('milestones view and gates', function () {
  this.timeout(180_000);
  let api: LaunchpadApi;
  let dir: string;

  before(async () => {
    api = await launchpad();
    const root = workspaceRoot();
    // The scripted agents read their control folder from the environment the run gives them.
    process.env.MS_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'lp-ms-host-'));
    await cli(
      'milestones',
      'init',
      'Host session',
      '--planner',
      path.join(FIXTURES, 'planner.sh'),
      '--worker',
      path.join(FIXTURES, 'worker.sh'),
      '--reviewer',
      path.join(FIXTURES, 'reviewer.sh'),
      '--verify',
      'true',
    );
    dir = path.join(root, 'docs/engineering-discipline/harness/host-session');
    const write = (id: string, deps: string) =>
      fs.writeFileSync(
        path.join(dir, 'milestones', `${id}-part.md`),
        `# ${id}: Part ${id}\n\n## Goal\nPart ${id}.\n\n## Scope\n- src/${id.toLowerCase()}/\n\n## Success Criteria\n- src/${id.toLowerCase()}/t1.txt exists\n\n## Dependencies\n- ${deps}\n`,
      );
    write('M1', '(none)');
    write('M2', 'M1');
  });

  it('shows each milestone with its phase, attempts and dependencies', async () => {
    const [session, ...others] = await eventually('the long run in the view', async () => {
      const s = await shown(api);
      return s[0]?.children.length === 2 ? s : undefined;
    });
    assert.equal(others.length, 0);
    assert.equal(label(session!), 'Long run: Host session');
    assert.equal(session!.item.description, 'pending · 0/2 completed');
    assert.deepEqual(session!.children.map(label), ['M1: Part M1', 'M2: Part M2']);
    assert.equal(session!.children[1]!.item.description, 'pending · attempt 0 · after M1');
    assert.match(tooltipText(session!.children[1]!.item), /\*\*Next run:\*\* waits for M1/);
    assert.ok(api.milestones.view.visible !== undefined, 'the view exists');
  });

  it('stops at the plan gate with a notification; Approve Plan opens the plan beside and the run goes on', async () => {
    await vscode.commands.executeCommand(COMMANDS.runLongRun);
    await runEnded(api);
    assert.equal(api.milestones.longRuns.lastOutcome?.exitCode, 4, api.milestones.longRuns.lastOutcome?.message);
    const m1 = await eventually('M1 awaiting approval', async () => {
      const m = await milestone(api, 'M1');
      return m?.item.contextValue === 'milestone:awaiting_approval:gate-plan' ? m : undefined;
    });
    assert.equal(m1.item.description, 'plan awaits approval · attempt 0 · 0/1 tasks');
    const plan = m1.children.find((c) => label(c) === 'Plan')!;
    assert.ok(plan, 'a link to the plan');
    assert.equal(plan.item.command?.command, 'vscode.open');
    const planPath = (plan.node as { path: string }).path;
    assert.ok(
      api.milestones.model.notified.some((n) => n.gate.kind === 'plan' && 'milestone' in n.gate && n.gate.milestone === 'M1'),
      'a notification for the gate',
    );

    await vscode.commands.executeCommand('workbench.view.extension.launchpad');
    await vscode.commands.executeCommand(`${VIEWS.milestones}.focus`);
    await requestScreenshot('milestones-gate');

    await vscode.commands.executeCommand(COMMANDS.reviewPlan, m1.node, { decision: 'approve' });
    assert.ok(
      vscode.window.visibleTextEditors.some((e) => e.document.uri.fsPath === planPath),
      'the plan is open',
    );
    await runEnded(api);
    await eventually('M1 completed, M2 at its plan gate', async () => {
      const a = await milestone(api, 'M1');
      const b = await milestone(api, 'M2');
      return a?.item.contextValue === 'milestone:completed' && b?.item.contextValue === 'milestone:awaiting_approval:gate-plan';
    });
    assert.ok(api.milestones.model.notified.some((n) => 'milestone' in n.gate && n.gate.milestone === 'M2'));
    assert.match(git('log', '--merges', '--first-parent', '--format=%s', 'main'), /^Merge milestone M1: Part M1$/m);
  });

  it('a rejected plan is planned again, approved from the view, and the long run completes', async () => {
    const before = await milestone(api, 'M2');
    const firstPlan = (before!.children.find((c) => label(c) === 'Plan')!.node as { path: string }).path;
    await vscode.commands.executeCommand(COMMANDS.rejectPlan, before!.node, { reason: 'smaller steps please' });
    await runEnded(api);
    const again = await eventually('a new plan for M2', async () => {
      const m = await milestone(api, 'M2');
      const p = m?.children.find((c) => label(c) === 'Plan');
      return p && (p.node as { path: string }).path !== firstPlan && m!.item.contextValue === 'milestone:awaiting_approval:gate-plan'
        ? m
        : undefined;
    });
    const notes = api.milestones.model.notified.filter((n) => 'milestone' in n.gate && n.gate.milestone === 'M2');
    assert.equal(notes.length, 2, 'the new plan is announced too');

    await vscode.commands.executeCommand(COMMANDS.approveMilestone, again.node);
    await runEnded(api);
    assert.equal(api.milestones.longRuns.lastOutcome?.exitCode, 0, api.milestones.longRuns.lastOutcome?.message);
    const [session] = await eventually('the run completed in the view', async () => {
      const s = await shown(api);
      return s[0]?.item.description === 'completed · 2/2 completed' ? s : undefined;
    });
    for (const m of session!.children) {
      assert.deepEqual(m.children.map(label), ['Plan', 'Review', 'Checkpoint'], label(m));
      assert.match(String(m.item.description), /^completed · attempt 1/);
    }
    assert.ok(fs.existsSync(path.join(dir, 'summary.md')));
    const state = fs.readFileSync(path.join(dir, 'state.md'), 'utf8');
    assert.match(state, /plan .* rejected: smaller steps please; planning again/);
  });
});
