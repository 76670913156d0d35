// Fills the folder the host opens, before the workbench starts (run.mjs --setup; plain Node).
// A git repository with a local identity, a harness of five tasks (dependencies, one that fails,
// one without a validation command) and a scripted agent, configured in .vscode/settings.json.
// The state files are ignored, as `launchpad init --gitignore` would do.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The agent: fails tasks whose title has "[fail]", waits two minutes first for "[slow]" (to be
 * stopped or closed), asks which port for "[ask]" (after committing part1.txt) until its prompt
 * holds the answer, writes a.txt and b.txt for "[review]" (and, when its prompt holds requested
 * changes, keeps that prompt as prompt-seen.txt and changes both), otherwise (and after those)
 * writes src/<id>/done.txt, commits and succeeds.
 */
const AGENT = `#!/bin/sh
set -e
echo "test agent: $LAUNCHPAD_TASK_ID attempt $LAUNCHPAD_ATTEMPT on $LAUNCHPAD_BRANCH"
case "$LAUNCHPAD_TASK_TITLE" in
  *"[fail]"*)
    echo "error: front matter parser: expected '---' at line 1"
    echo "RESULT:FAIL could not parse the front matter fixture"
    exit 0 ;;
  *"[slow]"*)
    # A line a second: a test sees the agent is still alive by its transcript growing.
    i=0
    while [ $i -lt 120 ]; do echo "waiting for a review that never comes ($i s)"; sleep 1; i=$((i+1)); done ;;
  *"[ask]"*)
    if ! grep -q '^A person answered:' "$LAUNCHPAD_PROMPT_FILE"; then
      mkdir -p "src/$LAUNCHPAD_TASK_ID"
      echo "part 1" > "src/$LAUNCHPAD_TASK_ID/part1.txt"
      git add -A
      git commit -q -m "[$LAUNCHPAD_TASK_ID] part 1"
      echo "QUESTION: Which port should the server use?"
      exit 0
    fi
    test -f "src/$LAUNCHPAD_TASK_ID/part1.txt"
    sed -n '/^A person answered:/{n;s/^> //;p;q;}' "$LAUNCHPAD_PROMPT_FILE" > "src/$LAUNCHPAD_TASK_ID/port.txt" ;;
  *"[review]"*)
    mkdir -p "src/$LAUNCHPAD_TASK_ID"
    if grep -q '^## Requested Changes' "$LAUNCHPAD_PROMPT_FILE"; then
      cp "$LAUNCHPAD_PROMPT_FILE" "src/$LAUNCHPAD_TASK_ID/prompt-seen.txt"
      echo "changed as asked" >> "src/$LAUNCHPAD_TASK_ID/a.txt"
      echo "changed as asked" >> "src/$LAUNCHPAD_TASK_ID/b.txt"
    else
      printf 'alpha one\nalpha two\nalpha three\n' > "src/$LAUNCHPAD_TASK_ID/a.txt"
      printf 'beta one\nbeta two\n' > "src/$LAUNCHPAD_TASK_ID/b.txt"
    fi ;;
  *"[lose worktree]"*)
    # The first time, its worktree is removed from under it (as a clean-up job would).
    if [ ! -e "$LAUNCHPAD_WORKTREE.lost" ]; then
      : > "$LAUNCHPAD_WORKTREE.lost"
      cd "$(git rev-parse --path-format=absolute --git-common-dir)/.."
      git worktree remove --force "$LAUNCHPAD_WORKTREE"
      echo "RESULT:FAIL my files are gone"
      exit 0
    fi ;;
esac
echo 'CHECKPOINT step=1/2 "writing done.txt"'
mkdir -p "src/$LAUNCHPAD_TASK_ID"
echo "done by $LAUNCHPAD_TASK_ID" > "src/$LAUNCHPAD_TASK_ID/done.txt"
git add -A
git commit -q -m "[$LAUNCHPAD_TASK_ID] $LAUNCHPAD_TASK_TITLE"
echo 'CHECKPOINT step=2/2 "committed"'
echo "RESULT:SUCCESS"
`;

export const SETUP_TASKS = [
  task('task-001', 'Add slugify()', []),
  task('task-002', 'Use slugify in page titles', ['task-001']),
  task('task-003', 'Parse front matter [fail]', [], { max_attempts: 1 }),
  task('task-004', 'Render the index page', ['task-002', 'task-003']),
  task('task-005', 'Write the docs', [], { validation: { command: null } }),
];

/** A pending task of the fixture's shape: P1, three attempts, its own folder, a done.txt check. */
export function task(id: string, title: string, dependsOn: string[], extra: Record<string, unknown> = {}) {
  return {
    id,
    title,
    status: 'pending',
    priority: 'P1',
    depends_on: dependsOn,
    attempts: 0,
    max_attempts: 3,
    files_hint: [`src/${id}/`],
    validation: { command: `test -f src/${id}/done.txt`, timeout_seconds: 60 },
    error_log: [],
    ...extra,
  };
}

export async function setup(dir: string): Promise<void> {
  const write = (rel: string, text: string, mode?: number) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text, mode === undefined ? undefined : { mode });
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Launchpad Tests');
  git('config', 'user.email', 'tests@launchpad.invalid');
  git('config', 'commit.gpgsign', 'false');

  write('README.md', '# fixture\n');
  write('tools/agent.sh', AGENT, 0o755);
  write(
    '.gitignore',
    [
      'harness-tasks.json',
      'harness-tasks.json.bak',
      'harness-tasks.json.tmp',
      'harness-tasks.json.corrupt-*',
      'harness-progress.txt',
      '.harness-active',
      '.launchpad/',
      '.vscode/',
      '',
    ].join('\n'),
  );
  git('add', '-A');
  git('commit', '-q', '-m', 'fixture');

  write(
    'harness-tasks.json',
    JSON.stringify(
      { version: 3, session_config: { max_parallel_agents: 2, retry_backoff_seconds: 0 }, tasks: SETUP_TASKS, session_count: 0 },
      null,
      2,
    ) + '\n',
  );
  write('harness-progress.txt', '');
  write('.vscode/settings.json', JSON.stringify({ 'launchpad.agent.command': path.join(dir, 'tools/agent.sh') }, null, 2) + '\n');
}
