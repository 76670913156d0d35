import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { Git } from '../../core/git/git';
import { GITIGNORE_ENTRIES, initStateFiles } from '../../core/init';
import { type Command, shellQuote } from '../command';
import { EXIT, UsageError } from '../exit';
import { commandIn } from '../invocation';
import { stateRootForInit } from '../stateRoot';
import { approveTypedIn } from '../trust';

export const initCommand: Command = {
  name: 'init',
  usage: 'launchpad init [--gitignore | --no-gitignore] [--init-script] [--json] [--dir DIR]',
  summary: 'Create harness-tasks.json, harness-progress.txt and .harness-active here (or in --dir). Never overwrites an existing file.',
  details:
    'The run artefacts folder (.launchpad/) is always listed in .git/info/exclude. Adding the state files to .gitignore changes a\n' +
    'tracked file, so it is asked on a terminal and otherwise done only with --gitignore. Outside a git repository the files\n' +
    'are created all the same, with a note: "launchpad run" needs a repository with a commit.',
  options: {
    gitignore: { type: 'boolean', help: `add the state files to .gitignore (${GITIGNORE_ENTRIES.length} entries)` },
    'no-gitignore': { type: 'boolean', help: 'do not touch .gitignore and do not ask' },
    'init-script': { type: 'boolean', help: 'also write a harness-init.sh health-check template' },
    json: { type: 'boolean', help: 'print what was done as JSON: {"root", "created", "existing", "ignored"} (asks nothing)' },
  },
  async run(ctx) {
    const { io, values } = ctx;
    if (values.gitignore && values['no-gitignore']) throw new UsageError('init: --gitignore and --no-gitignore exclude each other');
    const paths = stateRootForInit(ctx);
    const json = values.json === true;
    let gitignore = values.gitignore === true;
    const undecided = !gitignore && !values['no-gitignore'];
    if (undecided && !json && io.interactive && io.ask) {
      const answer = await io.ask('Add the Launchpad state files to .gitignore? [y/N] ');
      gitignore = /^y(es)?$/i.test(answer.trim());
    }
    const notAsked = undecided && !gitignore && !(io.interactive && io.ask) && !json;
    const result = await initStateFiles(paths, { gitignore, initScript: values['init-script'] === true });
    // The template is ours: approved as written; an edit of it is asked about.
    if (result.created.includes('harness-init.sh')) approveTypedIn(ctx, paths, (c) => c.file === 'harness-init.sh');
    if (json) {
      io.out(JSON.stringify({ root: paths.root, ...result }, null, 2) + '\n');
    } else {
      io.out(`Launchpad state root: ${paths.root}\n`);
      for (const f of result.created) io.out(`  created  ${f}\n`);
      for (const f of result.existing) io.out(`  kept     ${f} (already there)\n`);
      if (result.ignored.length) io.out(`  .gitignore: added ${result.ignored.join(', ')}\n`);
      // Without a terminal the question is not asked: say what was left, and how to have it.
      if (notAsked && result.created.length)
        io.out('  .gitignore: not changed (no terminal to ask); --gitignore adds the state files, --no-gitignore says no\n');
    }
    const git = new Git(paths.root);
    if (!(await git.toplevel())) {
      io.err(
        `note: ${paths.root} is not inside a git repository; "launchpad run" needs one with a commit:\n  git init && git add -A && git commit -m "initial commit"\n`,
      );
    } else if (!(await git.head())) {
      io.err('note: the repository has no commit yet; "launchpad run" needs one: git add -A && git commit -m "initial commit"\n');
    }
    const launchpad = commandIn(io, paths.root);
    if (result.created.includes('harness-tasks.json') && !json)
      io.out(`Next: ${launchpad} add "Title" --validate ${shellQuote(testCommandOf(paths.root))} --files src/x/\n`);
    return EXIT.OK;
  },
};

/** The test command the project's own files suggest, for the first task's example. */
function testCommandOf(root: string): string {
  const has = (f: string) => existsSync(join(root, f));
  if (has('package.json')) return 'npm test';
  if (has('pyproject.toml') || has('setup.py') || has('setup.cfg') || has('requirements.txt')) return 'python3 -m pytest';
  if (has('Cargo.toml')) return 'cargo test';
  if (has('go.mod')) return 'go test ./...';
  if (has('pom.xml')) return 'mvn test';
  if (has('build.gradle') || has('build.gradle.kts')) return './gradlew test';
  if (has('Gemfile')) return 'bundle exec rake test';
  if (has('Makefile')) return 'make test';
  return 'YOUR-TEST-COMMAND';
}
