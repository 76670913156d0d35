// Launchpad: Start Session — the same six steps as `launchpad start`, shown as a Markdown
// preview, with the choice of tasks, the scope gate and the focus question as quick picks.
// Step 5 runs a script and step 3 runs git: a trusted workspace only. An argument answers the
// questions without asking (other extensions, tests): { spec, tasks, scope, confirm }.
import * as vscode from 'vscode';

import type { ScopeChoice } from '../../core/journal/scopeGate';
import type { FocusTask } from '../../core/journal/sessionFocus';
import type { StartupSummary } from '../../core/journal/startup';
import { COMMANDS } from '../contributions';
import { loadCore } from '../coreLoader';
import { offer } from '../notify';
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

const COMMAND = 'launchpad (VS Code)';

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
  const core = await loadCore();
  const jpaths = new core.JournalPaths(paths);
  try {
    let spec = args.spec;
    if (spec === undefined) {
      const specs = core.listSpecs(jpaths);
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
    const summary = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Launchpad: session start-up' },
      () => core.gatherStartup({ cwd: paths.root, dir: paths.root, spec: spec ?? undefined, command: COMMAND }),
    );
    await showSummary(core.renderStartupMarkdown(summary));
    const result: StartSessionResult = { summary, tasks: [], entry: null, imported: null };
    if (summary.health.status === 'fail') {
      void vscode.window.showWarningMessage(
        `Launchpad: the environment health check failed (${summary.health.detail}); fix it before starting the session.`,
      );
      return result;
    }

    const requested = args.tasks ?? (await pickTasks(core.focusChoices(summary)));
    if (!requested) return undefined;
    const plan = core.planFocus(summary, requested);
    if (!plan.requested.length) {
      await showSummary(core.renderStartupMarkdown(summary, null));
      void vscode.window.showInformationMessage('Launchpad: nothing left to work on: every task is completed.');
      return result;
    }
    const decision = await core.scopeGate({
      requested: plan.requested.map((t) => t.id),
      ask: async (warning, question) => {
        await showSummary(core.renderStartupMarkdown(summary, { question, warning }));
        return args.scope ?? askScope(warning, question);
      },
      journal: new core.Journal(jpaths, COMMAND),
      ...(plan.spec ? { spec: plan.spec } : {}),
    });
    if (decision.cancelled) return undefined;
    const tasks = plan.requested.filter((t) => decision.tasks.includes(t.id));
    result.tasks = tasks.map((t) => t.id);
    const question = core.focusQuestion(tasks, summary);
    await showSummary(core.renderStartupMarkdown(summary, { question, ...(decision.warning ? { warning: decision.warning } : {}) }));

    const confirmed = args.confirm ?? (await askYesNo(question));
    if (!confirmed) return result;
    const started = await core.confirmSession(summary, tasks, COMMAND);
    result.entry = started.entry.id;
    result.imported = started.imported?.imported ?? null;
    await deps.model.refresh();
    const what = `Launchpad: session started on Task${tasks.length > 1 ? 's' : ''} ${result.tasks.join(', ')}`;
    if (started.imported) {
      offer('info', `${what}; ${started.imported.imported.length} subtask(s) of spec ${summary.spec} are in harness-tasks.json.`, {
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

async function pickTasks(choices: FocusTask[]): Promise<string[] | undefined> {
  if (choices.length <= 1) return choices.map((c) => c.id);
  const picked = await vscode.window.showQuickPick(
    choices.map((c, i) => ({ label: c.id, description: c.title, picked: i === 0 })),
    { title: 'Launchpad: Start Session', placeHolder: 'The task for this session (one is recommended)', canPickMany: true },
  );
  if (!picked) return undefined;
  return picked.length ? picked.map((p) => p.label) : [choices[0]!.id];
}

async function askScope(warning: string, question: string): Promise<ScopeChoice | undefined> {
  const { SCOPE_OPTIONS } = await loadCore();
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
