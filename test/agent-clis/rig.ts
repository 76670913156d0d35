// What every agent-CLI test shares: a repository with a three-task DAG, the script that has the
// real tool do each task with its own tools, and the environment that points the tool at the
// scripted model server with a home folder of its own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { findPreset } from '../../src/core/agents/presets';
import { AttemptPaths } from '../../src/core/statePaths';
import { harness, tempDir } from '../unit/controller/support';
import { installCli } from './install';
import type { Script, ScriptStep } from './modelServer';

/** The three tasks: alpha first, then beta and gamma, which need alpha. Titles are the script's keys. */
export const TASKS = [
  { id: 'task-001', title: 'Write alpha.txt', file: 'alpha.txt', dependsOn: [] as string[] },
  { id: 'task-002', title: 'Write beta.txt', file: 'beta.txt', dependsOn: ['task-001'] },
  { id: 'task-003', title: 'Write gamma.txt', file: 'gamma.txt', dependsOn: ['task-001'] },
];

/** A repository whose harness holds the DAG; each task's validation checks its file's text. */
export function dagHarness(opts: { maxAttempts?: number; only?: string[] } = {}): string {
  return harness({
    tasks: TASKS.filter((t) => !opts.only || opts.only.includes(t.id)).map((t) => ({
      id: t.id,
      title: t.title,
      files: [t.file],
      dependsOn: opts.only ? t.dependsOn.filter((d) => opts.only!.includes(d)) : t.dependsOn,
      validate: `grep -qx 'made by ${t.id}' ${t.file}`,
      context: `Create ${t.file} holding the line "made by ${t.id}", commit it, and end with RESULT:SUCCESS.`,
      ...(opts.maxAttempts ? { maxAttempts: opts.maxAttempts } : {}),
    })),
  });
}

/** The steps by which a tool does a task: its write tool, its shell tool to commit, a verdict. */
export function doTask(t: (typeof TASKS)[number], verdict = 'RESULT:SUCCESS'): ScriptStep[] {
  return [
    { kind: 'write', path: t.file, content: `made by ${t.id}\n` },
    { kind: 'shell', command: `git add ${t.file} && git commit -q -m 'Add ${t.file}'` },
    { kind: 'final', text: `CHECKPOINT step=1/1 "wrote ${t.file}"\nCommitted ${t.file}.\n${verdict}` },
  ];
}

/** Every task done in one attempt. */
export function dagScript(): Script {
  return Object.fromEntries(TASKS.map((t) => [t.title, doTask(t)]));
}

/**
 * The environment a run of `preset` gets: the installed tool first on PATH, a home folder of its
 * own (the tool's settings and logins stay out of the person's), and the given variables.
 */
export function toolEnv(preset: string, vars: Record<string, string> = {}): NodeJS.ProcessEnv {
  const p = findPreset(preset)!;
  const home = tempDir(`launchpad-${preset}-home-`);
  return {
    PATH: `${installCli(p)}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    LAUNCHPAD_TRUST: '1',
    ...vars,
  };
}

/** agent.json of a task's attempt. */
export function agentReport(root: string, task: string, attempt = 1): Record<string, any> {
  const dir = join(root, '.launchpad', 'runs', task, `attempt-${attempt}`);
  return JSON.parse(readFileSync(new AttemptPaths(dir).agentReport, 'utf8')) as Record<string, any>;
}

/** The transcript of a task's attempt: what the tool printed. */
export function transcript(root: string, task: string, attempt = 1): string {
  return readFileSync(join(root, '.launchpad', 'runs', task, `attempt-${attempt}`, 'transcript.log'), 'utf8');
}
