// One task from dispatch to its end: claim it, give it a worktree on harness-<id> from the base
// branch's head, run the agent with the prompt, read its verdict, validate in the worktree, and
// merge (through the merge queue) or discard.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { branchFor } from '../ids';
import { STATE_FILE_NAMES } from '../statePaths';
import type { Task, TaskFile } from '../taskFile/schema';
import { describeReport, writeAgentReport } from '../agents/report';
import { dispatchTask, recordCheckpoint, type CheckpointStep } from '../tasks/transitions';
import { AgentOutputScanner } from './agentOutput';
import { discardAttempt } from './discard';
import { mergeTask, type TaskEnd } from './merge';
import type { MergeQueue } from './mergeQueue';
import { buildPrompt } from './prompt';
import type { Session } from './session';
import type { TaskTerminal } from './types';
import { CAPTURE_BYTES, validateTask } from './validate';

/** A dispatched attempt (transitions.dispatchTask): who runs it, from which base commit. */
export interface ClaimedTask {
  agentId: string;
  base: string;
  /** The task as it was before the dispatch. */
  before: Task;
  attempt: number;
}

/** Dispatches the task inside the caller's transaction: the run loop claims a batch with its pool. */
export function claimTask(s: Session, file: TaskFile, taskId: string): ClaimedTask {
  const agentId = `agent_${randomBytes(4).toString('hex')}`;
  const base = s.head;
  const { before, attempt } = dispatchTask(file, taskId, { agentId, branch: branchFor(taskId), baseCommit: base });
  return { agentId, base, before, attempt };
}

/** One attempt of the task, from its dispatch (`claimed`: already recorded) to its end. */
export async function runTask(s: Session, task: Task, merges: MergeQueue, claimed?: ClaimedTask): Promise<TaskEnd> {
  const { agentId, base, before, attempt } = claimed ?? (await s.transact((file) => claimTask(s, file, task.id)));
  const branch = branchFor(task.id);
  const worktree = s.worktreePath(task.id);
  s.log({ type: 'DISPATCH', taskId: task.id, message: `agent=${agentId} worktree=${branch}` });
  s.taskEvents.fire({ taskId: task.id, kind: 'dispatched' });

  const terminal = s.terminals.open(task, worktree);
  const fail = (category: 'TASK_EXEC' | 'AGENT_FAIL' | 'TIMEOUT', reason: string, discardReason: string, tail?: string) =>
    discardAttempt(s, before, worktree, terminal, { category, reason, tail, discardReason });

  try {
    await createWorktree(s, task.id, worktree, branch, base);
  } catch (err) {
    return fail('TASK_EXEC', `could not create worktree ${worktree}: ${(err as Error).message}`, 'worktree creation failed');
  }
  if (s.stopping) return interrupted(terminal);

  const files = s.createAttempt(task.id, attempt);
  const prompt = buildPrompt(before, { worktree, branch, baseBranch: s.baseBranch });
  writeFileSync(files.prompt, prompt);
  terminal.write(`[launchpad] ${task.id} attempt ${attempt}: ${s.config.agentCommand}\r\n`);

  // A preset's parser reads the tool's own output format (RESULT lines inside its JSON, cost).
  const parser = s.config.agent?.preset?.createParser({ now: () => new Date() });
  const scanner = new AgentOutputScanner((c) => void checkpoint(s, task.id, c), parser);
  const agent = await terminal.run('agent', {
    command: s.config.agentCommand!,
    cwd: s.projectDirIn(worktree),
    env: {
      ...process.env,
      LAUNCHPAD_TASK_ID: task.id,
      LAUNCHPAD_TASK_TITLE: task.title,
      LAUNCHPAD_PROMPT_FILE: files.prompt,
      LAUNCHPAD_WORKTREE: worktree,
      LAUNCHPAD_BRANCH: branch,
      LAUNCHPAD_ATTEMPT: String(attempt),
    },
    stdin: prompt,
    timeoutMs: s.config.agentTimeoutMs,
    signal: s.stopSignal,
    transcript: files.transcript,
    captureBytes: CAPTURE_BYTES,
    record: { records: s.records, name: `${task.id}.agent`, label: `agent of ${task.id}` },
    onOutput: (text) => scanner.push(text),
  });
  const verdict = scanner.finish();
  const report = scanner.report();
  if (report) {
    try {
      writeAgentReport(files, report);
    } catch (err) {
      s.logger.warn(`could not write the agent report of ${task.id}: ${(err as Error).message}`);
    }
    if (describeReport(report)) terminal.write(`[launchpad] ${task.id} ${report.preset} reported: ${describeReport(report)}\r\n`);
  }
  if (agent.aborted && s.stopping) return interrupted(terminal);

  const success = verdict.kind === 'success' && !agent.timedOut && !agent.spawnError;
  s.log({ type: 'AGENT_DONE', taskId: task.id, message: `agent=${agentId} result=${success ? 'success' : 'error'}` });
  s.taskEvents.fire({ taskId: task.id, kind: 'agent-done' });
  if (agent.timedOut) {
    return fail('TIMEOUT', `Agent timed out after ${s.config.agentTimeoutMs / 1000}s`, 'agent timed out', agent.tail);
  }
  if (agent.spawnError) return fail('AGENT_FAIL', `could not start the agent: ${agent.spawnError}`, 'agent reported failure');
  if (verdict.kind === 'fail') return fail('AGENT_FAIL', verdict.reason, 'agent reported failure', agent.tail);
  if (verdict.kind === 'none') {
    const how = agent.code === 0 ? 'exited 0' : `exited with ${agent.code ?? agent.signal}`;
    return fail('AGENT_FAIL', `agent ${how} without a RESULT:SUCCESS or RESULT:FAIL line`, 'agent reported failure', agent.tail);
  }

  const problem = await inspectWork(s, before, worktree, base, { commitLeftovers: true, warnIfEmpty: true });
  if (problem) return fail('AGENT_FAIL', problem, 'agent reported failure');
  files.markWorkCommitted(agentId);

  const validation = await validateTask(s, before, worktree, terminal, files);
  if (validation.kind === 'interrupted') return interrupted(terminal);
  if (validation.kind === 'fail') {
    return discardAttempt(s, before, worktree, terminal, { ...validation, discardReason: 'validation failed' });
  }
  return merges.enqueue(task.id, () => mergeTask(s, before, worktree, terminal, files));
}

function interrupted(terminal: TaskTerminal): TaskEnd {
  terminal.write('\r\n[launchpad] stopped: the task stays in progress for the next run to recover\r\n');
  terminal.close('interrupted');
  return 'interrupted';
}

/** A worktree on a new branch from `base`; leftovers of an earlier attempt are removed first. */
export async function createWorktree(s: Session, taskId: string, worktree: string, branch: string, base: string): Promise<void> {
  // The last attempt's worktree may still be being removed (Session.removeWorktreeSoon).
  await s.removalOf(taskId);
  try {
    await s.git.addWorktree(worktree, branch, base);
  } catch {
    await s.removeWorktree(taskId);
    await s.git.addWorktree(worktree, branch, base);
  }
}

/**
 * After a successful agent: commits what it left uncommitted (validation must judge what will
 * be merged), and refuses work that touches the controller's state files. Returns a problem.
 */
export async function inspectWork(
  s: Session,
  task: Task,
  worktree: string,
  base: string,
  opts: { commitLeftovers: boolean; warnIfEmpty: boolean },
): Promise<string | undefined> {
  const leftovers = opts.commitLeftovers ? await s.git.anyChanges(worktree) : [];
  if (leftovers.length) {
    await s.git.commitAll(worktree, `[${task.id}] ${task.title} (changes left uncommitted by the agent)`);
    s.log({ type: 'WARN', taskId: task.id, message: `agent left ${leftovers.length} uncommitted change(s); committed them` });
  }
  const changed = await s.git.changedFiles(base, 'HEAD', worktree);
  const sub = relative(s.toplevel, s.paths.root).split('\\').join('/');
  const stateFiles = new Set(STATE_FILE_NAMES.map((f) => (sub ? `${sub}/${f}` : f)));
  const touched = changed.filter((f) => stateFiles.has(f));
  if (touched.length) return `agent modified the controller's state files: ${touched.join(', ')}`;
  if (!changed.length && opts.warnIfEmpty) s.log({ type: 'WARN', taskId: task.id, message: 'agent made no changes; validating the base as it is' });
  return undefined;
}

async function checkpoint(s: Session, taskId: string, c: CheckpointStep): Promise<void> {
  try {
    await s.transact((file) => void recordCheckpoint(file, taskId, c));
    s.log({ type: 'CHECKPOINT', taskId, message: `step=${c.step}/${c.total} "${c.description}"` });
    s.taskEvents.fire({ taskId, kind: 'checkpoint' });
  } catch (err) {
    s.logger.warn(`could not record checkpoint of ${taskId}: ${(err as Error).message}`);
  }
}
