// Launchpad: Start Session — the same six steps as `launchpad start`, shown as a Markdown
// preview, with the choice of tasks, the scope gate and the focus question as quick picks. The
// steps are `launchpad start --json` (it logs nothing without --yes); the person's answers are the
// flags of a second `launchpad start --yes`, which logs what they chose. Step 5 runs a script and
// step 3 runs git: a trusted workspace only. An argument answers the questions without asking
// (other extensions, tests): { spec, tasks, scope, confirm }.
import * as vscode from 'vscode';

import { JournalPaths, listSpecs } from '../../core/journal/journalPaths';
import { multipleTaskWarning, SCOPE_OPTIONS, type ScopeChoice, scopeQuestion } from '../../core/journal/scopeGate';
import type { FocusTask } from '../../core/journal/sessionFocus';
import type { StartupSummary } from '../../core/journal/startup';
import { focusQuestion, renderStartupMarkdown } from '../../core/journal/startupReport';
import type { StatePaths } from '../../core/statePaths';
import { COMMANDS } from '../contributions';
import { offer } from '../notify';
import { cliError, runCli } from '../run/cli';
import { requireTrust } from '../trust';
import type { CommandDeps, Handlers } from './deps';
import { reportEditError } from './errors';

export const SESSION_SCHEME = 'launchpad-session';
export const sessionUri = (): vscode.Uri => vscode.Uri.from({ scheme: SESSION_SCHEME, path: '/Launchpad Session Start-up.md' });

/** The summary shown (one document per window, replaced by each Start Session). */
const shown = { text: '# Launchpad: session start-up\n', changed: new vscode.EventEmitter<vscode.Uri>() };

export function registerSessionDocument(): vscode.Disposable {
  return vscode.Disposable.from(
    shown.changed,
    vscode.workspace.registerTextDocumentContentProvider(SESSION_SCHEME, {
      onDidChange: shown.changed.event,
      provideTextDocumentContent: () => shown.text,
    }),
  );
}

export interface StartSessionArgs {
  /** A spec name, or null for harness-tasks.json; asked when there are specs and it is absent. */
  spec?: string | null;
  /** The tasks (spec parent tasks) to work on; picked when absent. */
  tasks?: string[];
  /** The answer to the Multiple Task Warning. */
  scope?: ScopeChoice;
  /** The answer to "Ready to work on …?". */
  confirm?: boolean;
}

export interface StartSessionResult {
  summary: StartupSummary;
  tasks: string[];
  /** The session_started entry's id; null when not confirmed. */
  entry: string | null;
  /** Spec mode: the harness task ids of the subtasks now in harness-tasks.json. */
  imported: string[] | null;
}

/** What `launchpad start --json` prints: the summary, what can be picked, what it decided. */
interface StartOutput extends StartupSummary {
  choices: FocusTask[];
  focus: { requested: string[]; entry: string | null; imported: string[] | null } | null;
  notes: string[];
}

export function startSessionCommands(deps: CommandDeps): Handlers<typeof COMMANDS.startSession> {
  return { [COMMANDS.startSession]: (arg) => startSession(deps, asArgs(arg)) };
}

async function startSession(deps: CommandDeps, args: StartSessionArgs): Promise<StartSessionResult | undefined> {
  if (!requireTrust('Start Session')) return undefined;
  const paths = deps.model.stateRoot();
  if (!paths) {
    void vscode.window.showErrorMessage('Launchpad: open a folder first; a session starts in a project.');
    return undefined;
  }
  try {
    let spec = args.spec;
    if (spec === undefined) {
      const specs = listSpecs(new JournalPaths(paths));
      if (specs.length) {
        const pick = await vscode.window.showQuickPick(
          [
            ...specs.map((s) => ({ label: s, description: `.agent-os/tasks/${s}/tasks.md`, spec: s as string | null })),
            { label: 'harness-tasks.json', description: 'the tasks of harness-tasks.json', spec: null },
          ],
          { title: 'Launchpad: Start Session', placeHolder: 'Which tasks does this session work on?' },
        );
        if (!pick) return undefined;
        spec = pick.spec;
      } else {
        spec = null;
      }
    }
    const flags = spec ? [`--spec=${spec}`] : [];
    const {
      choices,
      focus,
      notes: _notes,
      ...summary
    } = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Launchpad: session start-up' },
      // Tasks given are checked (and a spec subtask stands for its parent) as `start --task` does.
      () => start(paths, [...flags, ...(args.tasks ? [`--task=${args.tasks.join(',')}`] : [])]),
    );
    await showSummary(renderStartupMarkdown(summary));
    const result: StartSessionResult = { summary, tasks: [], entry: null, imported: null };
    if (summary.health.status === 'fail') {
      void vscode.window.showWarningMessage(
        `Launchpad: the environment health check failed (${summary.health.detail}); fix it before starting the session.`,
      );
      return result;
    }

    const titled = (id: string): FocusTask => choices.find((c) => c.id === id) ?? { id, title: id };
    const requested = args.tasks ? (focus?.requested ?? []).map(titled) : await pickTasks(choices);
    if (!requested) return undefined;
    if (!requested.length) {
      await showSummary(renderStartupMarkdown(summary, null));
      void vscode.window.showInformationMessage('Launchpad: nothing left to work on: every task is completed.');
      return result;
    }
    let warning: string | undefined;
    let scope: ScopeChoice = 'single';
    if (requested.length > 1) {
      warning = multipleTaskWarning(requested.length, requested[0]!.id);
      const question = scopeQuestion(requested.length);
      await showSummary(renderStartupMarkdown(summary, { question, warning }));
      const chosen = args.scope ?? (await askScope(warning, question));
      if (!chosen) return undefined;
      scope = chosen;
    }
    const tasks = scope === 'all' ? requested : requested.slice(0, 1);
    result.tasks = tasks.map((t) => t.id);
    const question = focusQuestion(tasks, summary);
    await showSummary(renderStartupMarkdown(summary, { question, ...(warning ? { warning } : {}) }));

    const confirmed = args.confirm ?? (await askYesNo(question));
    if (!confirmed) return result;
    // The person's answers as flags: the tasks, "all" at the scope gate (logged as a scope override).
    const started = await start(paths, [...flags, `--task=${result.tasks.join(',')}`, ...(scope === 'all' ? ['--all'] : []), '--yes']);
    if (!started.focus?.entry) {
      // Steps 1–5 ran again: what they found now stopped it.
      const why =
        started.health.status === 'fail' ? `the environment health check failed (${started.health.detail})` : started.notes.join(' ');
      void vscode.window.showWarningMessage(`Launchpad: the session was not started: ${why}`);
      return result;
    }
    result.entry = started.focus.entry;
    result.imported = started.focus.imported;
    await deps.model.refresh();
    const what = `Launchpad: session started on Task${tasks.length > 1 ? 's' : ''} ${result.tasks.join(', ')}`;
    if (result.imported) {
      offer('info', `${what}; ${result.imported.length} subtask(s) of spec ${summary.spec} are in harness-tasks.json.`, {
        Run: () => vscode.commands.executeCommand(COMMANDS.run),
      });
    } else {
      void vscode.window.showInformationMessage(`${what}.`);
    }
    return result;
  } catch (err) {
    reportEditError('start session', err, deps.logger);
    return undefined;
  }
}

/** `launchpad start --json FLAGS`: its summary, also when the health check failed (exit 1). */
async function start(paths: StatePaths, flags: string[]): Promise<StartOutput> {
  const args = ['start', '--json', '--dir', paths.root, ...flags];
  const r = await runCli(args, { cwd: paths.root });
  if (r.code === 0 || r.code === 1) {
    try {
      const out = JSON.parse(r.stdout) as StartOutput | { error: unknown };
      if (!('error' in out)) return out;
    } catch {
      // Not its summary: the error says why.
    }
  }
  throw cliError(args, r);
}

/** The summary as a Markdown preview of the session document (the document itself when there is no preview). */
async function showSummary(markdown: string): Promise<void> {
  shown.text = markdown;
  // A change event only reaches a document this extension host has open (the preview may have
  // opened it elsewhere): open it here first, then announce the new text.
  await vscode.workspace.openTextDocument(sessionUri());
  shown.changed.fire(sessionUri());
  try {
    await vscode.commands.executeCommand('markdown.showPreview', sessionUri());
  } catch {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(sessionUri()), { preview: true });
  }
}

async function pickTasks(choices: FocusTask[]): Promise<FocusTask[] | undefined> {
  if (choices.length <= 1) return choices;
  const picked = await vscode.window.showQuickPick(
    choices.map((c, i) => ({ label: c.id, description: c.title, picked: i === 0, task: c })),
    { title: 'Launchpad: Start Session', placeHolder: 'The task for this session (one is recommended)', canPickMany: true },
  );
  if (!picked) return undefined;
  return picked.length ? picked.map((p) => p.task) : [choices[0]!];
}

async function askScope(warning: string, question: string): Promise<ScopeChoice | undefined> {
  const lines = warning.split('\n');
  const pick = await vscode.window.showQuickPick(
    SCOPE_OPTIONS.map((o) => ({
      label: o.label,
      choice: o.choice,
      detail: o.choice === 'single' ? lines.find((l) => l.startsWith('Recommendation')) : undefined,
    })),
    { title: `${lines[0]}: ${lines[2]}`, placeHolder: question, ignoreFocusOut: true },
  );
  return pick?.choice;
}

async function askYesNo(question: string): Promise<boolean> {
  const pick = await vscode.window.showQuickPick(['Yes', 'Not now'], {
    title: 'Launchpad: Start Session',
    placeHolder: question,
    ignoreFocusOut: true,
  });
  return pick === 'Yes';
}

function asArgs(arg: unknown): StartSessionArgs {
  if (!arg || typeof arg !== 'object') return {};
  const a = arg as Record<string, unknown>;
  const out: StartSessionArgs = {};
  if (a.spec === null || typeof a.spec === 'string') out.spec = a.spec;
  if (Array.isArray(a.tasks) && a.tasks.every((t) => typeof t === 'string')) out.tasks = a.tasks;
  if (a.scope === 'single' || a.scope === 'all') out.scope = a.scope;
  if (typeof a.confirm === 'boolean') out.confirm = a.confirm;
  return out;
}
