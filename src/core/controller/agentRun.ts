// Running one attempt's agent, the same in a worktree and in place: the preset's output parser,
// the process with its time limit and transcript, the checkpoints as they stream, and what the
// tool reported (agent.json, the terminal line, the cost recorded on the task).
import type { AgentReport } from '../agents/report';
import { describeReport, writeAgentReport } from '../agents/report';
import { assertFence } from '../attempt/lifecycle';
import { escapedMessage, type ProcessResult } from '../process/runProcess';
import type { AttemptPaths } from '../statePaths';
import type { Task } from '../taskFile/schema';
import { type CheckpointStep, recordCheckpoint } from '../tasks/transitions';
import { AgentOutputScanner, type AgentVerdict } from './agentOutput';
import { recordSpending } from './budget';
import type { Session } from './session';
import type { TaskTerminal } from './types';
import { CAPTURE_BYTES } from './validate';

export interface AgentRun {
  agent: ProcessResult;
  verdict: AgentVerdict;
  report: AgentReport | undefined;
}

export async function runAgent(
  s: Session,
  task: Task,
  terminal: TaskTerminal,
  files: AttemptPaths,
  spawn: { cwd: string; env: NodeJS.ProcessEnv; prompt: string; endWithController?: boolean },
): Promise<AgentRun> {
  // A preset's parser reads the tool's own output format (RESULT lines inside its JSON, cost).
  const parser = s.config.agent?.preset?.createParser({ now: () => new Date() });
  const scanner = new AgentOutputScanner((c) => void checkpoint(s, task.id, c), parser);
  const agent = await terminal.run('agent', {
    command: s.config.agentCommand!,
    cwd: spawn.cwd,
    env: spawn.env,
    stdin: spawn.prompt,
    timeoutMs: s.config.agentTimeoutMs,
    signal: s.stopSignal,
    transcript: files.transcript,
    captureBytes: CAPTURE_BYTES,
    record: { records: s.records, name: `${task.id}.agent`, label: `agent of ${task.id}` },
    endWithController: spawn.endWithController,
    onOutput: (text) => scanner.push(text),
  });
  if (agent.escaped) s.log({ type: 'WARN', taskId: task.id, message: escapedMessage('agent', agent.escaped) });
  const verdict = scanner.finish();
  const report = scanner.report();
  if (report) {
    try {
      writeAgentReport(files, report);
    } catch (err) {
      s.logger.warn(`could not write the agent report of ${task.id}: ${(err as Error).message}`);
    }
    if (describeReport(report)) terminal.write(`[launchpad] ${task.id} ${report.preset} reported: ${describeReport(report)}\r\n`);
    await recordSpending(s, task.id, report);
  }
  return { agent, verdict, report };
}

/** A CHECKPOINT of the running agent: recorded (renewing a concurrent worker's lease), then logged. */
export async function checkpoint(s: Session, taskId: string, c: CheckpointStep): Promise<void> {
  try {
    await s.transact((file) => {
      // A stale agent's checkpoint (its attempt taken over or replaced) is not the task's.
      const fence = s.fenceOf(taskId);
      if (fence) assertFence(file, fence);
      recordCheckpoint(file, taskId, c);
      s.worker?.renewIn(file, taskId);
    });
    s.log({ type: 'CHECKPOINT', taskId, message: `step=${c.step}/${c.total} "${c.description}"` });
    s.taskEvents.fire({ taskId, kind: 'checkpoint', checkpoint: { step: c.step, total: c.total, description: c.description } });
  } catch (err) {
    s.logger.warn(`could not record checkpoint of ${taskId}: ${(err as Error).message}`);
  }
}
