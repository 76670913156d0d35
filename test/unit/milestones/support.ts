// Shared by the long-run tests: a real repository with a harness directory, milestone files,
// the scripted planner / worker / reviewer of test/fixtures/milestones driven through a control
// folder ($MS_DIR), `launchpad milestones …` as a child process (the built CLI), and readers for
// state.md and the files a long run writes.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { type LongRunState, type MilestoneState, parseState } from '../../../src/core/milestones/stateFile';
import { launchpad, repo, type Result, show, startLaunchpad, tempDir } from '../controller/support';

export { git, show, sleep, tempDir, waitFor } from '../controller/support';

const FIXTURES = resolve(__dirname, '../../../../test/fixtures/milestones');
export const PLANNER = join(FIXTURES, 'planner.sh');
export const WORKER = join(FIXTURES, 'worker.sh');
export const REVIEWER = join(FIXTURES, 'reviewer.sh');

export const HARNESS_REL = 'docs/engineering-discipline/harness/session';

export interface MilestoneInput {
  name?: string;
  scope?: string[];
  deps?: string[];
  criteria?: string[];
  interfaces?: string[];
}

export interface LongRunFixture {
  root: string;
  harness: string;
  /** The scripted agents' control folder. */
  ctl: string;
  /** `launchpad milestones ARGS` in the repository, with the control folder in the environment. */
  ms(...args: string[]): Promise<Result>;
  start(...args: string[]): ReturnType<typeof startLaunchpad>;
  state(): LongRunState;
  milestone(id: string): MilestoneState;
  /** Writes a file into the control folder (a plan, verdicts, a worker hook, a gate). */
  control(name: string, text?: string): void;
  read(rel: string): string;
}

export interface FixtureOptions {
  milestones: Record<string, MilestoneInput>;
  files?: Record<string, string>;
  verify?: string;
  testSuite?: string;
  settings?: string[];
}

/** A repository with a committed project and a harness directory (state.md written as `init` writes it). */
export async function longRun(opts: FixtureOptions): Promise<LongRunFixture> {
  const root = repo(opts.files ?? { 'README.md': '# project\n' });
  const ctl = tempDir('launchpad-ms-ctl-');
  // A failed task is retried at once: the tests of milestones do not wait out the back-off.
  const env = { MS_DIR: ctl, LAUNCHPAD_RETRY_BACKOFF_SECONDS: '0' };
  const ms = (...args: string[]) => launchpad(root, ['milestones', ...args], env);
  const args = ['init', 'session', '--planner', PLANNER, '--worker', WORKER, '--reviewer', REVIEWER];
  if (opts.verify) args.push('--verify', opts.verify);
  if (opts.testSuite) args.push('--test', opts.testSuite);
  const init = await ms(...args);
  if (init.code !== 0) throw new Error(`milestones init failed:\n${show(init)}`);
  const harness = join(root, HARNESS_REL);
  if (opts.settings) {
    // "Key: value" lines replace the template's lines of the same key.
    const path = join(harness, 'state.md');
    let text = readFileSync(path, 'utf8');
    for (const line of opts.settings) text = text.replace(new RegExp(`^- ${line.split(':')[0]}: .*$`, 'm'), `- ${line}`);
    writeFileSync(path, text);
  }
  for (const [id, m] of Object.entries(opts.milestones)) writeMilestone(harness, id, m);
  const fixture: LongRunFixture = {
    root,
    harness,
    ctl,
    ms,
    start: (...a) => startLaunchpad(root, ['milestones', ...a], env),
    state: () => parseState(readFileSync(join(harness, 'state.md'), 'utf8'), 'state.md').state,
    milestone: (id) => {
      const m = fixture.state().milestones.find((x) => x.id === id);
      if (!m) throw new Error(`${id} is not in state.md`);
      return m;
    },
    control: (name, text = '') => {
      mkdirSync(join(ctl, name, '..'), { recursive: true });
      writeFileSync(join(ctl, name), text);
    },
    read: (rel) => readFileSync(join(root, rel), 'utf8'),
  };
  return fixture;
}

export function writeMilestone(harness: string, id: string, m: MilestoneInput): void {
  const lower = id.toLowerCase();
  const list = (items: string[] | undefined, fallback: string) => (items?.length ? items : [fallback]).map((i) => `- ${i}`).join('\n');
  const text = [
    `# ${id}: ${m.name ?? `Part ${id}`}`,
    '',
    '## Goal',
    `Build ${m.name ?? id}.`,
    '',
    '## Scope',
    list(m.scope, `src/${lower}/`),
    '',
    '## Success Criteria',
    list(m.criteria, `src/${lower}/t1.txt exists`),
    '',
    '## Dependencies',
    list(m.deps, '(none)'),
    '',
    ...(m.interfaces ? ['## Interfaces', list(m.interfaces, ''), ''] : []),
  ].join('\n');
  writeFileSync(join(harness, 'milestones', `${id}-${lower}.md`), text);
}

/** A plan for the scripted planner: tasks T1..Tn writing src/<m>/t<k>.txt. */
export function planOf(id: string, tasks: number, extra: (k: number) => string[] = () => []): string {
  const lower = id.toLowerCase();
  const lines = [`# Plan: ${id}`, '', '## Tasks', ''];
  for (let k = 1; k <= tasks; k++) {
    lines.push(`- [ ] T${k} Write file ${k}`, `  - Files: src/${lower}/`, `  - Validate: \`test -f src/${lower}/t${k}.txt\``, ...extra(k));
  }
  return lines.join('\n') + '\n';
}

/** The execution log's lines (without the bullet), optionally those about one milestone. */
export function logOf(state: LongRunState, id?: string): string[] {
  return state.log.map((e) => e.text).filter((t) => !id || t.includes(`[${id}]`));
}

/** The prompts the scripted agents kept, in order: planner-M1-1.md, worker-M1-T1-1.md, … */
export function prompts(ctl: string, prefix: string): string[] {
  const dir = join(ctl, 'prompts');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && n.endsWith('.md'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
    .map((n) => readFileSync(join(dir, n), 'utf8'));
}

export function assertExit(r: Result, code: number, root?: string): void {
  if (r.code !== code)
    throw new Error(
      `expected exit ${code}\n${show(r)}${root ? `\n--- state.md\n${readFileSync(join(root, HARNESS_REL, 'state.md'), 'utf8')}` : ''}`,
    );
}
