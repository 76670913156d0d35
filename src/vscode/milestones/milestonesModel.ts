// The long runs of the workspace as the Milestones view shows them: every harness directory under
// docs/engineering-discipline/harness/ of each folder's repository, read and checked by the core
// (read-only: nothing is written, nothing runs, so it works in Restricted Mode too). It reloads
// when anything under docs/engineering-discipline/ changes, and tells a person once about each
// gate that starts waiting.
import * as vscode from 'vscode';

import type { Logger } from '../../core/logger';
import type { Gate } from '../../core/milestones/gates';
import { findRepoTop, HARNESS_PARENT, HarnessPaths, listHarnessDirs } from '../../core/milestones/paths';
import type { LongRunStatus } from '../../core/milestones/statusBlock';
import { COMMANDS, VIEWS } from '../contributions';
import { loadCore } from '../coreLoader';
import { offer } from '../notify';

export interface SessionView {
  dir: string;
  repoTop: string;
  status?: LongRunStatus | undefined;
  /** Why it could not be read: the message names the file, the line and the field. */
  error?: Error | undefined;
}

const DEBOUNCE_MS = 150;

/** How often the harness directories are looked at again when no watcher event came. */
const POLL_MS = 3000;

export class MilestonesModel implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<SessionView[]>();
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];
  private watchers: vscode.Disposable[] = [];
  private watched = '';
  private current: SessionView[] | undefined;
  private loading: Promise<SessionView[]> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private openGates = new Set<string>();
  /** Every gate notification shown, newest last (what a person was told; tests read it). */
  readonly notified: Array<{ dir: string; gate: Gate; text: string }> = [];

  constructor(private readonly logger: Logger) {
    this.disposables.push(vscode.workspace.onDidChangeWorkspaceFolders(() => this.scheduleRefresh(0)));
    // File watchers miss events under load (a harness made by another process stayed unseen): a
    // slow poll is the safety net, as for the progress log.
    const poll = setInterval(() => this.scheduleRefresh(0), POLL_MS);
    this.disposables.push({ dispose: () => clearInterval(poll) });
  }

  get sessions(): SessionView[] {
    return this.current ?? [];
  }

  whenLoaded(): Promise<SessionView[]> {
    return this.current ? Promise.resolve(this.current) : this.refresh();
  }

  session(dir: string): SessionView | undefined {
    return this.sessions.find((s) => s.dir === dir);
  }

  scheduleRefresh(delay = DEBOUNCE_MS): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), delay);
  }

  /** Loads now; a call during a load gets one more load after it, so no change is missed. */
  refresh(): Promise<SessionView[]> {
    clearTimeout(this.timer);
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.load().finally(() => {
      this.loading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.loading;
  }

  private async load(): Promise<SessionView[]> {
    const folders = vscode.workspace.workspaceFolders?.filter((f) => f.uri.scheme === 'file') ?? [];
    const tops = [...new Set(folders.map((f) => findRepoTop(f.uri.fsPath) ?? f.uri.fsPath))];
    this.watch(tops);
    const sessions: SessionView[] = [];
    const dirs = tops.flatMap((top) => listHarnessDirs(top).map((dir) => ({ dir, top })));
    if (dirs.length) {
      const core = await loadCore();
      for (const { dir, top } of dirs) {
        try {
          sessions.push({ dir, repoTop: top, status: core.buildLongRunStatus(core.loadLongRun(new HarnessPaths(dir, top))) });
        } catch (err) {
          sessions.push({ dir, repoTop: top, error: err as Error });
        }
      }
    }
    this.current = sessions;
    this.emitter.fire(sessions);
    this.announceGates(sessions);
    return sessions;
  }

  /** One notification per gate when it starts waiting (again after it was answered and came back). */
  private announceGates(sessions: SessionView[]): void {
    const open = new Set<string>();
    for (const s of sessions) {
      for (const gate of s.status?.gates ?? []) {
        const key = `${s.dir}|${gate.kind}|${'milestone' in gate ? gate.milestone : ''}|${gate.kind === 'plan' ? gate.plan : ''}`;
        open.add(key);
        if (this.openGates.has(key)) continue;
        this.notified.push({ dir: s.dir, gate, text: gate.text });
        this.notify(s.dir, gate);
      }
    }
    this.openGates = open;
  }

  private notify(dir: string, gate: Gate): void {
    const show = () => vscode.commands.executeCommand(`${VIEWS.milestones}.focus`);
    switch (gate.kind) {
      case 'plan':
        offer(
          'info',
          `Launchpad: ${gate.milestone} (${gate.name}) — its plan awaits approval (${gate.tasks} task${gate.tasks === 1 ? '' : 's'}).`,
          {
            'Review Plan': () => vscode.commands.executeCommand(COMMANDS.reviewPlan, { dir, id: gate.milestone }),
          },
        );
        return;
      case 'failed':
        offer('warning', `Launchpad: ${gate.milestone} (${gate.name}) failed: ${gate.reason}`, {
          Retry: () => vscode.commands.executeCommand(COMMANDS.retryMilestone, { dir, id: gate.milestone }),
          'Show Milestones': show,
        });
        return;
      case 'integration':
      case 'duration':
        offer('warning', `Launchpad: ${gate.milestone} (${gate.name}) waits for your decision: ${gate.reason}`, {
          'Show Milestones': show,
        });
        return;
      case 'e2e':
        offer('warning', `Launchpad: ${gate.reason}`, { 'Show Milestones': show });
        return;
      default:
        this.logger.debug(`gate ${gate.kind} is not announced`);
    }
  }

  /** Harness files are replaced by rename: the watch is on names under docs/engineering-discipline/. */
  private watch(tops: string[]): void {
    if (tops.join('\n') === this.watched) return;
    this.watched = tops.join('\n');
    for (const w of this.watchers) w.dispose();
    this.watchers = tops.map((top) => {
      const w = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(vscode.Uri.file(top), `${HARNESS_PARENT.split('/').slice(0, -1).join('/')}/**`),
      );
      const poke = () => this.scheduleRefresh();
      return vscode.Disposable.from(w, w.onDidChange(poke), w.onDidCreate(poke), w.onDidDelete(poke));
    });
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const w of this.watchers) w.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
