import * as vscode from 'vscode';
import type { Logger } from '../../core/logger';
import type { HarnessModel } from '../model/harnessModel';

/** Owns the controller run of this window (at most one). */
export class RunManager implements vscode.Disposable {
  constructor(
    readonly model: HarnessModel,
    readonly logger: Logger,
  ) {}

  dispose(): void {}
}
