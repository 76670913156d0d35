// `launchpad milestones init NAME`: a new harness directory with a commented state.md and a
// commented example milestone (milestones/_example.md, which is not a milestone: only files named
// M<N>*.md are). Never overwrites anything.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { InputError } from '../inputError';
import { quoteCode } from './markdown';
import { slugify } from './names';
import { HARNESS_PARENT, HarnessPaths } from './paths';
import { parseState } from './stateFile';

export interface InitOptions {
  verify?: string | undefined;
  testSuite?: string | undefined;
  planner?: string | undefined;
  worker?: string | undefined;
  reviewer?: string | undefined;
}

export function createHarness(repoTop: string, name: string, opts: InitOptions = {}): HarnessPaths {
  if (!name.trim()) throw new InputError('milestones init: give the session a name');
  const dir = join(repoTop, HARNESS_PARENT, slugify(name, 60));
  const paths = new HarnessPaths(dir, repoTop);
  if (existsSync(paths.state)) throw new InputError(`${paths.rel(paths.state)} exists already; a harness directory is never overwritten`);
  const text = stateTemplate(name.trim(), opts);
  parseState(text, 'state.md'); // the template must read back
  mkdirSync(paths.milestonesDir, { recursive: true });
  mkdirSync(paths.checkpointsDir, { recursive: true });
  writeFileSync(paths.state, text, { flag: 'wx' });
  const example = join(paths.milestonesDir, '_example.md');
  if (!existsSync(example)) writeFileSync(example, EXAMPLE_MILESTONE);
  return paths;
}

const code = (v: string | undefined) => (v ? quoteCode(v) : '(none)');

function stateTemplate(name: string, o: InitOptions): string {
  return `# Long Run: ${name}

<!--
  Launchpad keeps this file: every change is written whole before the next action (the previous
  copy stays as state.md.bak), and the Execution Log only grows. You may edit the fields between
  runs; a run checks them and names the file, line and field of anything it cannot read.
  Comments like this one do not survive Launchpad's first write.
  Overall Status: pending, running, paused, completing, completed or failed.
-->
- Overall Status: pending
- Base Branch: (none)
- Started: (none)
- Completed: (none)

## Verification Strategy
<!--
  The project's highest-level check (Command) and its full test suite, shell command lines run at
  the top of the repository: on each milestone's branch merged with the base branch before it is
  merged, and on the integrated result by the final E2E gate. (none) skips one.
-->
- Command: ${code(o.verify)}
- Test Suite: ${code(o.testSuite)}

## Agents
<!--
  Shell command lines. Each gets its prompt on standard input and in $LAUNCHPAD_PROMPT_FILE.
  The planner writes $LAUNCHPAD_PLAN_FILE; the worker is Launchpad's task agent (it commits and
  ends with RESULT:SUCCESS or RESULT:FAIL); the reviewer writes $LAUNCHPAD_REVIEW_FILE ending in a
  line "VERDICT: PASS" or "VERDICT: FAIL". The run's --planner, --worker and --reviewer win.
-->
- Planner: ${code(o.planner)}
- Worker: ${code(o.worker)}
- Reviewer: ${code(o.reviewer)}

## Settings
<!--
  Max Parallel Milestones: milestones in progress at once (their scopes must not overlap).
  Duration Guard / Duration Guard Factor: a milestone planning or executing for longer than the
  greater of the Duration Guard and the Factor times the mean duration of the completed
  milestones stops and asks whether to continue.
-->
- Max Parallel Milestones: 2
- Duration Guard: 2h
- Duration Guard Factor: 3

## Milestones
<!-- One "### M<N>" entry per milestone file in milestones/; a run adds new files as pending. -->

## Execution Log
`;
}

const EXAMPLE_MILESTONE = `<!--
  An example milestone. Milestones are the files milestones/M<N>-<name>.md (this file, named
  _example.md, is not one): copy it to M1-<name>.md and write your own. Sections:
    Goal              free text: what the milestone achieves
    Scope             the files and folders it may change (milestones whose scopes overlap never run at once)
    Success Criteria  what the review checks; a later milestone's planner is told they were met
    Dependencies      milestone ids that must be completed first, or (none)
    Interfaces        optional: "path: text" — text the file must keep containing once this milestone
                      is done (a signature, a type); every later integration check verifies it
-->
# M1: Parse the configuration file

## Goal
Read config.toml into a typed Config object, with errors that name the line.

## Scope
- src/config/
- test/config/

## Success Criteria
- \`npm test -- config\` passes
- an unknown key is reported with its line number

## Dependencies
- (none)

## Interfaces
- src/config/index.ts: export function parseConfig(text: string): Config
`;
