// The long run's commands: run and stop it, and the gates as actions — Approve Plan opens the plan
// beside the question Approve / Reject; approve, reject, retry and skip are `launchpad milestones
// approve|reject|retry|skip` (under the harness lock, logged in state.md), the person's answer as
// its flags, and then the run goes on. Each handler that changes a file or starts a process
// checks Workspace Trust first. A command gets a tree element, `{ dir, id }`, a milestone id (with
// one long run in the workspace) or nothing (it asks); an optional second argument
// `{ decision, reason }` answers its question without asking.
import * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import { HarnessPaths } from '../../core/milestones/paths';
import type { Handler, MilestoneCommand } from '../commands/deps';
import { reportEditError } from '../commands/errors';
import { COMMANDS } from '../contributions';
import { offer } from '../notify';
import { cliOutput } from '../run/cli';
import { requireTrust } from '../trust';
import type { LongRunManager } from './longRunManager';
import type { MilestonesModel } from './milestonesModel';

export interface MilestoneDeps {
  model: MilestonesModel;
  longRuns: LongRunManager;
  logger: Logger;
}

interface Target {
  dir: string;
  id?: string | undefined;
}

interface Answer {
  decision?: 'approve' | 'reject';
  reason?: string;
}

export function milestoneCommands(deps: MilestoneDeps): { [P in MilestoneCommand]: Handler } {
  return {
    [COMMANDS.runLongRun]: (arg) => run(deps, arg),
    [COMMANDS.stopLongRun]: () => {
      if (!deps.longRuns.stop()) void vscode.window.showInformationMessage('Launchpad: no long run is going in this window.');
    },
    [COMMANDS.reviewPlan]: (arg, answer) => reviewPlan(deps, arg, answer as Answer | undefined),
    [COMMANDS.approveMilestone]: (arg, answer) => approveGate(deps, arg, answer as Answer | undefined),
    [COMMANDS.rejectPlan]: (arg, answer) => rejectPlan(deps, arg, answer as Answer | undefined),
    [COMMANDS.retryMilestone]: async (arg) => {
      if (!requireTrust('Retry Milestone')) return;
      const t = await target(deps, arg, 'Retry which milestone?', (r) => r.status === 'failed');
      if (t?.id) await decide(deps, t, `retry ${t.id}`, ['retry', t.id]);
    },
    [COMMANDS.skipMilestone]: async (arg, answer) => {
      if (!requireTrust('Skip Milestone')) return;
      const t = await target(deps, arg, 'Skip which milestone?', (r) => r.status !== 'completed' && r.status !== 'skipped');
      if (!t?.id) return;
      const reason =
        (answer as Answer | undefined)?.reason ??
        (await vscode.window.showInputBox({
          title: `Skip ${t.id}`,
          prompt:
            'Why is it skipped? (goes into the execution log; a skipped milestone cannot be un-skipped and its dependents stay blocked)',
        }));
      if (reason) await decide(deps, t, `skip ${t.id}`, ['skip', t.id, `--reason=${reason}`]);
    },
    [COMMANDS.refreshMilestones]: () => deps.model.refresh(),
  };
}

async function run(deps: MilestoneDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Run Long Run')) return;
  const t = await target(deps, arg);
  if (!t) return;
  if (deps.longRuns.active) {
    void vscode.window.showInformationMessage('Launchpad: a long run is already going in this window.');
    return;
  }
  await startRun(deps, t.dir);
}

async function startRun(deps: MilestoneDeps, dir: string): Promise<void> {
  if (deps.longRuns.active) return;
  try {
    await deps.longRuns.start(dir);
  } catch (err) {
    reportEditError('run the long run', err, deps.logger);
  }
}

async function reviewPlan(deps: MilestoneDeps, arg: unknown, answer: Answer | undefined): Promise<void> {
  if (!requireTrust('Approve Plan')) return;
  const t = await target(deps, arg, 'Review the plan of which milestone?', (r) => r.status === 'awaiting_approval');
  if (!t?.id) return;
  const gate = deps.model.session(t.dir)?.status?.gates.find((g) => g.kind === 'plan' && g.milestone === t.id);
  if (!gate || gate.kind !== 'plan') {
    void vscode.window.showInformationMessage(`Launchpad: ${t.id} has no plan awaiting approval.`);
    return;
  }
  const repoTop = deps.model.session(t.dir)!.repoTop;
  await vscode.window.showTextDocument(vscode.Uri.file(new HarnessPaths(t.dir, repoTop).abs(gate.plan)), {
    viewColumn: vscode.ViewColumn.Beside,
    preview: false,
  });
  const choice =
    answer?.decision ??
    (
      await vscode.window.showInformationMessage(
        `Approve ${t.id}'s plan (${gate.tasks} task${gate.tasks === 1 ? '' : 's'})?`,
        { modal: false, detail: gate.warnings.join('\n') || undefined },
        'Approve',
        'Reject',
      )
    )?.toLowerCase();
  if (choice === 'approve') await decide(deps, t, `approve ${t.id}'s plan`, ['approve', t.id]);
  else if (choice === 'reject') await rejectWithReason(deps, t, answer?.reason);
}

/** Approve: a plan (without opening it), an integration gap accepted, continuing past the duration guard, or the final gate. */
async function approveGate(deps: MilestoneDeps, arg: unknown, answer: Answer | undefined): Promise<void> {
  if (!requireTrust('Approve Milestone')) return;
  if (isSessionNode(arg)) {
    await decide(deps, { dir: arg.dir }, 'accept the final gate', ['approve', 'final', ...reasonFlag(answer?.reason)]);
    return;
  }
  const t = await target(deps, arg, 'Approve which milestone?', (r) => r.status === 'awaiting_approval' || !!r.awaiting);
  if (t?.id) await decide(deps, t, `approve ${t.id}`, ['approve', t.id, ...reasonFlag(answer?.reason)]);
}

async function rejectPlan(deps: MilestoneDeps, arg: unknown, answer: Answer | undefined): Promise<void> {
  if (!requireTrust('Reject Plan')) return;
  const t = await target(deps, arg, 'Reject the plan of which milestone?', (r) => r.status === 'awaiting_approval');
  if (t?.id) await rejectWithReason(deps, t, answer?.reason);
}

async function rejectWithReason(deps: MilestoneDeps, t: Target, given: string | undefined): Promise<void> {
  const reason =
    given ??
    (await vscode.window.showInputBox({
      title: `Reject ${t.id}'s plan`,
      prompt: 'Why? The next plan is made with your reason as a constraint.',
    }));
  if (reason) await decide(deps, t, `reject ${t.id}'s plan`, ['reject', t.id!, `--reason=${reason}`]);
}

/**
 * Applies a decision (`launchpad milestones SUB ARGS DIR`, under the harness lock) and lets the
 * run go on. While this window's run holds the lock, the decision waits for it to stop.
 */
async function decide(deps: MilestoneDeps, t: Target, action: string, args: string[]): Promise<void> {
  const go = async () => {
    if (await applyDecision(deps, t, action, args)) await startRun(deps, t.dir);
  };
  if (deps.longRuns.active) {
    deps.longRuns.afterRun(go);
    void vscode.window.showInformationMessage(
      `Launchpad: ${action}: applied as soon as the running long run stops (it holds the harness).`,
    );
    return;
  }
  await go();
}

async function applyDecision(deps: MilestoneDeps, t: Target, action: string, args: string[]): Promise<boolean> {
  try {
    const message = await cliOutput(['milestones', ...args, t.dir], { cwd: t.dir });
    offer('info', `Launchpad: ${message.trim()}`);
    return true;
  } catch (err) {
    reportEditError(action, err, deps.logger);
    return false;
  } finally {
    await deps.model.refresh();
  }
}

/** A reason given as the answer, as the decision's flag (`=`: a reason may start with "-"). */
function reasonFlag(reason: string | undefined): string[] {
  return reason ? [`--reason=${reason}`] : [];
}

function isSessionNode(arg: unknown): arg is { kind: 'session'; dir: string } {
  return !!arg && typeof arg === 'object' && 'kind' in arg && arg.kind === 'session' && 'dir' in arg && typeof arg.dir === 'string';
}

type Row = NonNullable<NonNullable<ReturnType<MilestonesModel['session']>>['status']>['milestones'][number];

/** The long run and milestone an argument names; asks (a quick pick) for what it does not name. */
async function target(deps: MilestoneDeps, arg: unknown, question?: string, eligible?: (r: Row) => boolean): Promise<Target | undefined> {
  const sessions = await deps.model.whenLoaded();
  let t: Target | undefined;
  if (arg && typeof arg === 'object' && 'dir' in arg && typeof arg.dir === 'string') {
    t = { dir: arg.dir, id: 'id' in arg && typeof arg.id === 'string' ? arg.id : undefined };
  } else if (sessions.length === 1) {
    t = { dir: sessions[0]!.dir, id: typeof arg === 'string' ? arg : undefined };
  } else if (sessions.length > 1) {
    const pick = await vscode.window.showQuickPick(
      sessions.map((s) => ({ label: s.status?.name ?? s.dir, description: s.dir, dir: s.dir })),
      { title: 'Which long run?' },
    );
    t = pick && { dir: pick.dir, id: typeof arg === 'string' ? arg : undefined };
  } else {
    void vscode.window.showInformationMessage(
      'Launchpad: no long run in this workspace. Create one with "launchpad milestones init NAME" in a terminal.',
    );
    return undefined;
  }
  if (!t || t.id || !question) return t;
  const rows = (deps.model.session(t.dir)?.status?.milestones ?? []).filter((r) => !eligible || eligible(r));
  if (!rows.length) {
    void vscode.window.showInformationMessage(`Launchpad: no milestone to ${question.split(' ')[0]!.toLowerCase()}.`);
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    rows.map((r) => ({ label: `${r.id}: ${r.name}`, description: r.status, id: r.id })),
    { title: question },
  );
  return pick ? { dir: t.dir, id: pick.id } : undefined;
}
