// The terminal seam without a UI: processes run as plain child process groups. `onOutput` lets a
// front end show or tee what they print (the CLI's --verbose, tests).
import { runProcess } from '../process/runProcess';
import type { ProcessKind, TerminalFactory } from './types';

export function headlessTerminals(onOutput?: (taskId: string, kind: ProcessKind | 'controller', text: string) => void): TerminalFactory {
  return {
    open(task) {
      return {
        run: (kind, spec) =>
          runProcess({
            ...spec,
            onOutput: (text) => {
              spec.onOutput?.(text);
              onOutput?.(task.id, kind, text);
            },
          }),
        write: (text) => onOutput?.(task.id, 'controller', text),
        close: () => undefined,
      };
    },
  };
}
