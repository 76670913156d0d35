// launchpad review / approve / request-changes: review before merge from a terminal. A task under
// review "manual" waits after its validation passes; a person reads its change here, then
// approves it (the next run merges it) or asks for changes on lines (the next run resumes its
// agent with the comments). The editor does the same through these commands.
import { Git } from '../../core/git/git';
import { approveLogged, parseComment, requestChangesLogged, reviewDiff, reviewOf } from '../../core/review/review';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const reviewCommand: Command = {
  name: 'review',
  usage: 'launchpad review ID [--json]',
  summary: 'Show the change of a task awaiting review: its files and its diff from where its branch started.',
  details:
    'A task with review "manual" (on the task or in session_config) waits after its validation passes, its worktree and branch kept. Then: launchpad approve ID, or launchpad request-changes ID --comment "path:line text".',
  globals: ['dir', 'no-color'],
  options: {
    json: {
      type: 'boolean',
      help: 'print {"id", "title", "status", "round", "max_rounds", "branch", "base", "commit", "worktree", "files": [{"path", "status"}], "comments"} instead of the diff',
    },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx) {
    const id = ctx.positionals[0]!;
    const store = existingStateRoot(ctx, 'review');
    const git = new Git(store.paths.root);
    const view = await reviewOf(store, git, id);
    if (ctx.values.json === true) {
      ctx.io.out(JSON.stringify(view, null, 2) + '\n');
      return EXIT.OK;
    }
    const c = ctx.colour;
    ctx.io.out(`${c.bold(`${view.id}: ${view.title}`)}\n`);
    ctx.io.out(
      `review round ${view.round} of at most ${view.max_rounds + 1}: ${view.branch} at ${view.commit.slice(0, 7)}, from ${view.base.slice(0, 7)}\n`,
    );
    if (view.worktree) ctx.io.out(`worktree: ${view.worktree}\n`);
    ctx.io.out(`${view.files.length} file(s): ${view.files.map((f) => `${f.status} ${f.path}`).join(', ')}\n\n`);
    ctx.io.out(await reviewDiff(git, view, c.enabled));
    ctx.io.out(`\nnext: launchpad approve ${id}   or   launchpad request-changes ${id} --comment "path:line what to change"\n`);
    return EXIT.OK;
  },
};

export const approveCommand: Command = {
  name: 'approve',
  usage: 'launchpad approve ID [--json]',
  summary: 'Approve the change of a task awaiting review: the next run validates it again and merges it, before other work.',
  details: 'No agent runs for it. Commits added to its branch after the review are reviewed again instead of merged.',
  options: { json: { type: 'boolean', help: 'print {"id", "status", "commit"}' } },
  positionals: { min: 1, max: 1 },
  async run(ctx) {
    const store = existingStateRoot(ctx, 'approve');
    const task = await approveLogged(store, ctx.positionals[0]!);
    const commit = task.review_round!.commit;
    if (ctx.values.json === true) ctx.io.out(JSON.stringify({ id: task.id, status: task.status, commit }, null, 2) + '\n');
    else ctx.io.out(`${task.id}: approved (${commit.slice(0, 7)}); the next run merges it first\n`);
    return EXIT.OK;
  },
};

export const requestChangesCommand: Command = {
  name: 'request-changes',
  usage: 'launchpad request-changes ID --comment "path:line text" [--comment …] [--json]',
  summary:
    'Send a task awaiting review back to its agent with comments: the next run resumes it in the same worktree with them in its prompt.',
  details:
    "path is relative to the repository top, line counted from 1 in the reviewed commit; the line's text goes to the agent with the comment. A review round is not a failed attempt; session_config.max_review_rounds (3) caps the requests.",
  options: {
    comment: { type: 'string', multiple: true, value: '"PATH:LINE TEXT"', help: 'a comment on a line of the change (repeat for more)' },
    json: { type: 'boolean', help: 'print {"id", "status", "round", "comments": [{"file", "line", "text", "comment"}]}' },
  },
  positionals: { min: 1, max: 1 },
  async run(ctx) {
    const specs = ([] as string[]).concat((ctx.values.comment as unknown as string[] | undefined) ?? []);
    if (!specs.length)
      throw new UsageError(`request-changes: at least one --comment "path:line text" is needed\nusage: ${requestChangesCommand.usage}`);
    const store = existingStateRoot(ctx, 'request-changes');
    const inputs = specs.map(parseComment);
    const task = await requestChangesLogged(store, new Git(store.paths.root), ctx.positionals[0]!, inputs);
    const round = task.review_round!;
    if (ctx.values.json === true) {
      ctx.io.out(JSON.stringify({ id: task.id, status: task.status, round: round.number, comments: round.comments }, null, 2) + '\n');
    } else {
      ctx.io.out(`${task.id}: changes requested (${inputs.length} comment(s)); the next run resumes its agent with them first\n`);
    }
    return EXIT.OK;
  },
};
