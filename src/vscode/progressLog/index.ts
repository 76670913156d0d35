import type * as vscode from 'vscode';
import type { HarnessModel } from '../model/harnessModel';

export function registerProgressLog(_context: vscode.ExtensionContext, _model: HarnessModel): void {}
