import { MAX_QUESTION_CHARS } from '../../core/taskFile/schema';
import { answerQuestionLogged } from '../../core/tasks/edits';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const answerCommand: Command = {
  name: 'answer',
  usage: 'launchpad answer ID "ANSWER" [--json]',
  summary: "Answer the question a task's agent asked: the task is pending again, and the next run resumes it first.",
  details:
    "The next attempt continues in the asking attempt's worktree and branch, with the question and the answer in its prompt. Only a task awaiting an answer (status awaiting_answer) can be answered.",
  options: {
    json: { type: 'boolean', help: 'print the task answered as JSON: {"id", "question", "answer"}' },
  },
  positionals: { min: 2, max: 2 },
  async run(ctx) {
    const [id, answer] = ctx.positionals as [string, string];
    if (!answer.trim()) throw new UsageError(`answer: the answer is empty\nusage: ${answerCommand.usage}`);
    if (answer.length > MAX_QUESTION_CHARS)
      throw new UsageError(`answer: the answer has ${answer.length} characters; at most ${MAX_QUESTION_CHARS}`);
    const store = existingStateRoot(ctx, 'answer');
    const task = await answerQuestionLogged(store, id, answer);
    const q = task.question!;
    if (ctx.values.json === true) {
      ctx.io.out(JSON.stringify({ id: task.id, question: q.text, answer: q.answer }, null, 2) + '\n');
    } else {
      ctx.io.out(`${task.id}: pending; the next run resumes its worktree with the answer first\n`);
    }
    return EXIT.OK;
  },
};
