// The core's Logger on the extension's LogOutputChannel (errors keep their stacks).
import * as vscode from 'vscode';

import type { Logger } from '../core/logger';

export function outputLogger(channel: vscode.LogOutputChannel): Logger {
  return {
    debug: (m) => channel.debug(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => channel.error(m),
  };
}
