// The Stop hook's rule. The agent is kept working while there is work it can do: the current
// task is in progress and has not passed its validation, or eligible tasks remain (or the task
// file needs repairing). It may stop when the person interrupted it, when a `launchpad run`
// works the list, when nothing can run, and — so a refusal never loops — when it is already
// continuing because of our refusal and neither harness-tasks.json nor harness-progress.txt
// changed since: asking again with nothing new would only repeat the same instruction.
// Pure: (input, snapshot, memory of our last refusal) → decision and the memory to keep.
import type { HookInput } from './input';
import { describeTask, focusOf, type StateSnapshot, validatedSinceStart } from './stateView';

/** What the hook remembers of its last refusal in one agent session. */
export interface StopMemory {
  fingerprint: string;
}

export type StopDecision = { kind: 'allow'; why: string } | { kind: 'continue'; reason: string };

export interface StopOutcome {
  decision: StopDecision;
  /** To keep for the next stop of this session; null clears it. */
  memory: StopMemory | null;
}

export function decideStop(input: HookInput, snap: StateSnapshot, memory: StopMemory | undefined): StopOutcome {
  const allow = (why: string): StopOutcome => ({ decision: { kind: 'allow', why }, memory: null });
  if (input.interrupted) return allow('the turn was interrupted');
  if (snap.run) return allow(`${snap.run.command} (pid=${snap.run.pid}) is working the task list`);

  const reason = snap.file ? workReason(snap) : repairReason(snap.fileError ?? 'it cannot be read');
  if (!reason) return allow('no task is in progress and none can start');
  if (input.stopHookActive && memory?.fingerprint === snap.fingerprint) {
    return allow('nothing changed in harness-tasks.json or harness-progress.txt since the last request to continue');
  }
  return { decision: { kind: 'continue', reason: `${reason}\n${CLOSING}` }, memory: { fingerprint: snap.fingerprint } };
}

const CLOSING =
  'If the work cannot go on without a person, say why and stop: you will not be asked again while harness-tasks.json and harness-progress.txt stay unchanged.';

function workReason(snap: StateSnapshot): string | undefined {
  const { current, inProgress, next } = focusOf(snap.file!, snap.workerId);
  if (!current) return undefined;
  const validation = current.validation?.command?.trim();
  const validate = validation ? `run its validation (${validation})` : 'give it a validation command and run it';
  const lines = ['Launchpad: the task list is not done; keep working through it.'];
  if (inProgress) {
    if (validatedSinceStart(current.id, snap.recentLog)) {
      if (!next.length) return undefined;
      lines.push(`${describeTask(current)} passed its validation: record it as completed in harness-tasks.json and harness-progress.txt.`);
    } else {
      lines.push(
        `Current task ${describeTask(current)} is in progress and not validated yet: finish it, ${validate}, then record the outcome in harness-tasks.json and harness-progress.txt.`,
      );
    }
  } else {
    lines.push(
      `Next task ${describeTask(current)}: mark it in_progress (with started_at_commit) and log Starting in harness-progress.txt, do it, ${validate}, then record the outcome.`,
    );
  }
  if (next.length) {
    const more = next.length - 1;
    lines.push(`Then ${describeTask(next[0]!)}${more ? ` and ${more} more eligible task${more === 1 ? '' : 's'}` : ''}.`);
  }
  return lines.join('\n');
}

function repairReason(error: string): string {
  return [
    `Launchpad: harness-tasks.json cannot be used: ${error}`,
    'Restore it from harness-tasks.json.bak if that copy is valid, or fix the field named, then go on with the tasks.',
  ].join('\n');
}
