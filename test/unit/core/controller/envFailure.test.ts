// The one classification of failures into the machine's (ENV_SETUP) and the task's, on the
// literal messages git, the shell and Node print.
import assert from 'node:assert/strict';

import {
  classifyError,
  classifyExit,
  classifyGitOutput,
  EnvFailureError,
  programProblem,
  unrunnableProgram,
  worktreeFailure,
  writeFailure,
} from '../../../../src/core/controller/envFailure';
import { isExpectedError } from '../../../../src/core/expectedErrors';
import { GitError } from '../../../../src/core/git/git';

/** A Node errno error as fs throws it. */
function errno(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: something, ${syscall} '${path}'`), { code, syscall, path, errno: -1 });
}

function gitError(stderr: string, args = ['merge', '--no-ff', 'harness-task-001']): GitError {
  return new GitError(args, {
    code: 128,
    signal: null,
    timedOut: false,
    aborted: false,
    stdout: '',
    stderr,
    tail: stderr,
    durationMs: 1,
    escaped: 0,
  });
}

const INDEX_LOCK = `fatal: Unable to create '/r/.git/index.lock': File exists.

Another git process seems to be running in this repository, e.g.
an editor opened by 'git commit'. Please make sure all processes
are terminated then try again. If it still fails, a git process
may have crashed in this repository earlier:
remove the file manually to continue.
`;

const REF_LOCK = `Preparing worktree (new branch 'harness-task-001')
fatal: cannot lock ref 'refs/heads/harness-task-001': Unable to create '/r/.git/refs/heads/harness-task-001.lock': File exists.

Another git process seems to be running in this repository, e.g.
an editor opened by 'git commit'. Please make sure all processes
are terminated then try again. If it still fails, a git process
may have crashed in this repository earlier:
remove the file manually to continue.
`;

describe('core/controller/envFailure', () => {
  describe('classifyGitOutput', () => {
    it('a leftover .git/index.lock: the file named, and what to do', () => {
      const f = classifyGitOutput(INDEX_LOCK)!;
      assert.equal(f.category, 'ENV_SETUP');
      assert.equal(f.cause, "git's lock file /r/.git/index.lock exists");
      assert.equal(f.advice, 'remove /r/.git/index.lock if no git process is running');
    });

    it('a leftover refs/heads/harness-<id>.lock (an agent killed inside git commit): "cannot lock ref"', () => {
      const f = classifyGitOutput(REF_LOCK)!;
      assert.equal(f.cause, 'git cannot lock refs/heads/harness-task-001: /r/.git/refs/heads/harness-task-001.lock exists');
      assert.equal(f.advice, 'remove /r/.git/refs/heads/harness-task-001.lock if no git process is running');
    });

    it("someone's unfinished merge in the main working tree: named, with what to do", () => {
      const f = classifyGitOutput(
        'fatal: You have not concluded your merge (MERGE_HEAD exists).\nPlease, commit your changes before you merge.',
      )!;
      assert.equal(f.category, 'ENV_SETUP');
      assert.equal(f.cause, 'the main working tree has an unfinished merge (MERGE_HEAD exists)');
      assert.match(f.advice, /git merge --abort/);
    });

    it('a full disk, as git says it in its several ways', () => {
      for (const out of [
        "fatal: sha1 file '/r/.git/index.lock' write error. Out of diskspace",
        'fatal: unable to write loose object file: No space left on device',
        'error: copy-fd: write returned: No space left on device',
      ]) {
        const f = classifyGitOutput(out);
        assert.ok(f, out);
        assert.match(f.cause, /^git: no space left on device \(/, out);
        assert.equal(f.advice, 'free disk space', out);
      }
    });

    it('a write that failed without saying why (git does not always print errno): a write failure, disk and permissions named', () => {
      const f = classifyGitOutput(
        "Preparing worktree (new branch 'h')\nerror: unable to write file big.bin\nfatal: Could not reset index file to revision 'HEAD'.",
      )!;
      assert.equal(f.cause, 'git could not write (error: unable to write file big.bin)');
      assert.match(f.advice, /free disk space/);
      assert.ok(classifyGitOutput('error: Unable to write index.'));
    });

    it('a read-only or unwritable repository', () => {
      const ro = classifyGitOutput(
        "error: could not lock config file .git/config: Read-only file system\nfatal: could not create directory '/r/.git/worktrees/x': Read-only file system",
      )!;
      assert.match(ro.cause, /^git: read-only file system/);
      const denied = classifyGitOutput("fatal: could not create leading directories of '/w/task-001/.git': Permission denied")!;
      assert.equal(denied.advice, 'make /w/task-001 writable');
    });

    it('merge.autostash with the index locked: "fatal: stash failed"', () => {
      assert.match(classifyGitOutput('error: Unable to write index.\nfatal: stash failed')!.cause, /could not write|stash/);
      assert.match(classifyGitOutput('fatal: stash failed')!.advice, /index\.lock/);
    });

    it("the task's own failures are not the machine's: conflicts, a branch that exists, a bad revision", () => {
      for (const out of [
        'CONFLICT (content): Merge conflict in src/a.txt\nAutomatic merge failed; fix conflicts and then commit the result.',
        "fatal: a branch named 'harness-task-001' already exists",
        "error: cannot lock ref 'refs/heads/x': reference already exists",
        'fatal: invalid reference: abc123',
        'error: Your local changes to the following files would be overwritten by merge:\n\tsrc/a.txt',
        "hint: enospc is not a word git uses; /tmp/enospc/repo is just a folder's name",
      ]) {
        assert.equal(classifyGitOutput(out), undefined, out);
      }
    });
  });

  describe('classifyError', () => {
    it("Node errno errors of Launchpad's own writes: ENOSPC, EACCES, EROFS, EPERM, ENOTDIR, EMFILE", () => {
      const full = classifyError(errno('ENOSPC', 'write', '/r/.launchpad/runs/task-001/attempt-1/transcript.log'))!;
      assert.equal(full.cause, 'cannot write /r/.launchpad/runs/task-001/attempt-1/transcript.log: no space left on device (ENOSPC)');
      assert.equal(full.advice, 'free disk space on the file system holding /r/.launchpad/runs/task-001/attempt-1');
      const denied = classifyError(errno('EACCES', 'mkdir', '/r/.launchpad'))!;
      assert.equal(denied.cause, 'cannot create the folder /r/.launchpad: permission denied (EACCES)');
      assert.equal(denied.advice, 'make /r writable');
      assert.equal(classifyError(errno('EROFS', 'access', '/r'))!.advice, 'make /r writable');
      assert.equal(classifyError(errno('EPERM', 'open', '/r/harness-tasks.json.tmp'))!.advice, 'make /r writable');
      assert.equal(classifyError(errno('ENOTDIR', 'mkdir', '/r/.launchpad/runs'))!.advice, 'make /r/.launchpad writable');
      assert.match(classifyError(errno('EMFILE', 'open', '/r/x'))!.advice, /ulimit -n/);
    });

    it('a program that cannot be started: spawn git ENOENT', () => {
      const e = Object.assign(new Error('spawn git ENOENT'), { code: 'ENOENT', syscall: 'spawn git', path: 'git' });
      assert.deepEqual(classifyError(e), {
        category: 'ENV_SETUP',
        cause: '`git` not found on PATH',
        advice: 'install git or put it on PATH',
      });
    });

    it('a GitError is classified by the output it carries', () => {
      assert.equal(classifyError(gitError(INDEX_LOCK))!.advice, 'remove /r/.git/index.lock if no git process is running');
      assert.equal(classifyError(gitError('CONFLICT (content): Merge conflict in a')), undefined);
    });

    it("anything else is not the machine: a bug, a missing file that is the task's, a plain Error", () => {
      assert.equal(classifyError(new Error('boom')), undefined);
      assert.equal(classifyError(errno('ENOENT', 'open', '/r/src/x.ts')), undefined);
      assert.equal(classifyError('a string'), undefined);
    });

    it('an EnvFailureError carries its failure, and is an expected error (exit 2, no stack) naming cause and advice', () => {
      const failure = programProblem('agent command', 'cladue', 'missing');
      const err = new EnvFailureError(failure);
      assert.equal(classifyError(err), failure);
      assert.ok(isExpectedError(err));
      assert.equal(err.message, `${failure.cause}\nto fix: ${failure.advice}`);
    });
  });

  describe('the agent or validation command cannot run', () => {
    it('exit 127 with the shell saying "not found" (dash and bash), 126 with "Permission denied"', () => {
      assert.deepEqual(unrunnableProgram(127, 'sh: 1: cladue: not found\n'), { program: 'cladue', problem: 'missing' });
      assert.deepEqual(unrunnableProgram(127, 'bash: line 1: cladue: command not found\n'), { program: 'cladue', problem: 'missing' });
      assert.deepEqual(unrunnableProgram(127, '/bin/sh: 1: ./run-agent.sh: not found'), { program: './run-agent.sh', problem: 'missing' });
      assert.deepEqual(unrunnableProgram(126, 'sh: 1: ./agent.sh: Permission denied'), {
        program: './agent.sh',
        problem: 'not-executable',
      });
      assert.deepEqual(unrunnableProgram(127, '/bin/sh: 1: : Permission denied'), { program: '', problem: 'not-executable' });
    });

    it("any other exit, or output that is not the shell's, is the task's", () => {
      assert.equal(unrunnableProgram(1, 'sh: 1: cladue: not found'), undefined);
      assert.equal(unrunnableProgram(127, 'Error: config.json: not found'), undefined);
      assert.equal(unrunnableProgram(126, 'sh: 1: x: not found'), undefined);
      assert.equal(unrunnableProgram(0, ''), undefined);
    });

    it('the messages name the program and the fix', () => {
      assert.deepEqual(classifyExit(127, 'sh: 1: cladue: not found', 'agent command'), {
        category: 'ENV_SETUP',
        cause: 'agent command `cladue` not found on PATH',
        advice:
          'install `cladue` or fix the agent command (--agent, LAUNCHPAD_AGENT, launchpad.agent.command or session_config.agent_command)',
      });
      assert.equal(programProblem('validation command', './check.sh', 'missing').cause, 'validation command `./check.sh` does not exist');
      assert.match(programProblem('validation command', 'pytest', 'not-executable').advice, /chmod \+x.*validation\.command/);
      assert.match(programProblem('agent command', '', 'not-executable').cause, /empty program name/);
    });
  });

  it("writeFailure: Node's message of a failed write (a transcript stream) with its errno", () => {
    assert.deepEqual(writeFailure('/r/.launchpad/runs/a/attempt-1/transcript.log', 'ENOSPC: no space left on device, write'), {
      category: 'ENV_SETUP',
      cause: 'could not write /r/.launchpad/runs/a/attempt-1/transcript.log: no space left on device (ENOSPC)',
      advice: 'free disk space on the file system holding /r/.launchpad/runs/a/attempt-1',
    });
  });

  it("worktreeFailure: every worktree creation failure is the machine's, with git's reason when known", () => {
    const known = worktreeFailure('/w/task-001', gitError(REF_LOCK, ['worktree', 'add']));
    assert.equal(
      known.cause,
      'could not create worktree /w/task-001: git cannot lock refs/heads/harness-task-001: /r/.git/refs/heads/harness-task-001.lock exists',
    );
    const unknown = worktreeFailure('/w/task-001', new Error('something odd'));
    assert.equal(unknown.category, 'ENV_SETUP');
    assert.equal(unknown.cause, 'could not create worktree /w/task-001: something odd');
    assert.match(unknown.advice, /git worktree prune/);
    const full = worktreeFailure(
      '/w/task-001',
      gitError('error: unable to write file big.bin'),
      'only 12 KB free on the file system holding /w',
    );
    assert.match(full.cause, /only 12 KB free/);
    assert.match(full.advice, /^free disk space/);
  });
});
