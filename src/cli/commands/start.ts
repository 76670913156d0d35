import { Journal } from '../../core/journal/journal';
import { findProjectRoot, JournalPaths } from '../../core/journal/journalPaths';
import { scopeGate } from '../../core/journal/scopeGate';
import { confirmSession, focusChoices, planFocus } from '../../core/journal/sessionFocus';
import { gatherStartup } from '../../core/journal/startup';
import { focusQuestion, renderStartupText } from '../../core/journal/startupReport';
import { StatePaths } from '../../core/statePaths';
import { type Command, splitList } from '../command';
import { EXIT } from '../exit';
import { scopeNotice, terminalScopeAsker } from '../scopePrompt';
import { approveStartCommands, explicitApproval, TRUST_OPTION } from '../trust';

export const startCommand: Command = {
  name: 'start',
  usage: 'launchpad start [--yes] [--json] [--trust] [--task IDS] [--all] [--spec NAME]',
  summary: 'Session start-up: check where you are, read the journal, the git state, the tasks and the environment, then confirm the focus.',
  details: [
    'Six steps: (1) the project root (harness-tasks.json or .agent-os/ found upward) inside a git repository, else exit 2;',
    '(2) the last 20 journal entries: accomplishments, unresolved blockers, the last suggested next steps; (3) git status,',
    "the last 5 commits, warnings on uncommitted changes or a branch other than the last session's; (4) next task, blocked",
    "tasks, percentage done (of harness-tasks.json, and of the spec's tasks.md with --spec); (5) harness-init.sh, else",
    'session_config.health_check, with a time limit (skipped when neither exists; a failure exits 1); (6) "Ready to work on',
    'Task X?": asked on a terminal, confirmed by --yes, otherwise printed and exit 0 without logging. Confirming logs',
    "session_started (with --spec, it also puts the chosen parent tasks' subtasks into harness-tasks.json).",
    'More than one parent task shows the Multiple Task Warning and asks; without a terminal only --all keeps them all.',
    "Step 5 runs a command from the repository's files: the first time (and whenever it changes) it is shown and asked about on",
    'a terminal; otherwise, and with --json, start exits 2 before step 1 and names it ("launchpad trust" approves it; --trust or',
    'LAUNCHPAD_TRUST=1 for this time only; docs/trust.md).',
  ].join('\n'),
  options: {
    yes: { type: 'boolean', short: 'y', help: 'confirm the focus without asking (logs session_started)' },
    json: { type: 'boolean', help: 'print the whole summary as one JSON object (asks nothing)' },
    task: { type: 'string', value: 'IDS', help: 'the task(s) to work on, comma-separated (spec parent tasks with --spec)' },
    all: { type: 'boolean', help: 'keep every task of --task without asking (logged as a scope override)' },
    spec: { type: 'string', value: 'NAME', help: 'include .agent-os/tasks/NAME/tasks.md (synced to its tasks.json)' },
    ...TRUST_OPTION,
  },
  async run(ctx) {
    const { io, values } = ctx;
    const json = values.json === true;
    // The health check of step 5 is the repository's command: approved before anything is shown.
    const root = explicitApproval(ctx) ? undefined : findProjectRoot(io.cwd, ctx.dir, io.env);
    if (root) await approveStartCommands(io, root, !json && io.interactive);
    const summary = await gatherStartup({ cwd: io.cwd, dir: ctx.dir, env: io.env, spec: values.spec as string | undefined });
    const canAsk = !json && io.interactive && !!io.ask;
    const out: string[] = [];
    const say = (text: string) => (json ? out.push(text) : io.out(`${text}\n`));
    if (!json) io.out(renderStartupText(summary));

    const result = {
      ...summary,
      /** What the session can work on, the next first: what Start Session offers to pick from. */
      choices: focusChoices(summary),
      focus: null as null | {
        requested: string[];
        tasks: string[];
        question: string;
        warning: string | null;
        scope: string | null;
        confirmed: boolean;
        entry: string | null;
        imported: string[] | null;
      },
      notes: out,
    };
    const finish = (code: number) => {
      if (json) io.out(JSON.stringify(result, null, 2) + '\n');
      return code;
    };

    if (summary.health.status === 'fail') {
      say(`6. Focus: not asked: the environment health check failed (${summary.health.detail}); fix it, then run launchpad start again`);
      return finish(EXIT.INCOMPLETE);
    }
    const plan = planFocus(summary, splitList(values.task));
    if (!plan.requested.length) {
      say('6. Focus: nothing left to work on: every task is completed');
      return finish(EXIT.OK);
    }
    const jpaths = new JournalPaths(new StatePaths(summary.root));
    const decision = await scopeGate({
      requested: plan.requested.map((t) => t.id),
      ask: terminalScopeAsker(io, canAsk),
      all: values.all === true,
      journal: new Journal(jpaths, 'launchpad start'),
      ...(plan.spec ? { spec: plan.spec } : {}),
    });
    if (decision.warning && decision.via !== 'asked') say(decision.warning);
    const notice = scopeNotice(decision, plan.requested.length);
    if (notice) say(notice);
    const tasks = plan.requested.filter((t) => decision.tasks.includes(t.id));
    const question = focusQuestion(tasks, summary);
    result.focus = {
      requested: plan.requested.map((t) => t.id),
      tasks: tasks.map((t) => t.id),
      question,
      warning: decision.warning ?? null,
      scope: decision.via ?? null,
      confirmed: false,
      entry: null,
      imported: null,
    };

    let confirmed = values.yes === true;
    if (!confirmed && canAsk) {
      confirmed = /^y(es)?$/i.test((await io.ask!(`6. Focus: ${question} (y/n) `)).trim());
      if (!confirmed) say('Not started: nothing logged.');
    } else if (!confirmed) {
      say(`6. Focus: ${question}`);
      say('   (not confirmed: nothing logged; answer on a terminal, or pass --yes)');
    } else {
      say(`6. Focus: ${question} yes (--yes)`);
    }
    if (!confirmed) return finish(EXIT.OK);

    const started = await confirmSession(summary, tasks);
    result.focus.confirmed = true;
    result.focus.entry = started.entry.id;
    result.focus.imported = started.imported?.imported ?? null;
    say(`session_started logged (${started.entry.id})`);
    if (started.imported) {
      say(`spec ${summary.spec}: ${started.imported.imported.length} subtask(s) in harness-tasks.json; "launchpad run" works on them`);
      if (started.imported.withoutValidation.length) {
        say(
          `note: no validation command for subtask(s) ${started.imported.withoutValidation.join(', ')}: add "- validate: <cmd>" under them or set session_config.default_validation_command`,
        );
      }
    }
    return finish(EXIT.OK);
  },
};
