import { ProgressLog } from '../../core/log/progressLog';
import type { Command } from '../command';
import { EXIT } from '../exit';
import { existingStateRoot } from '../stateRoot';

export const restoreBackupCommand: Command = {
  name: 'restore-backup',
  usage: 'launchpad restore-backup',
  summary: 'Replace a harness-tasks.json that cannot be read by its backup (.bak), keeping the broken file as .corrupt-<time>.',
  details: [
    'A run restores the backup by itself only when the broken file is the one Launchpad last wrote; a file changed by',
    'hand is never replaced without this command. The backup is the version before the last write: changes made since',
    'are lost (they stay in the .corrupt-<time> copy). Refused when the file is valid, when the backup is missing or',
    'invalid too, and while a run is going; then nothing changes.',
  ].join('\n'),
  options: {},
  async run(ctx) {
    const store = existingStateRoot(ctx, 'restore-backup');
    const { error, corruptCopy, file } = await store.restoreBackup();
    const reason = error.message.split('\n')[0]!.replace(/"/g, "'");
    new ProgressLog(store.paths.progress).append(file.session_count, {
      type: 'RECOVERY',
      message: `action="restored harness-tasks.json from .bak" reason="requested by user (launchpad restore-backup): ${reason}" kept=${corruptCopy}`,
    });
    ctx.io.out(
      `restored harness-tasks.json from harness-tasks.json.bak (${file.tasks.length} task${file.tasks.length === 1 ? '' : 's'})\n`,
    );
    ctx.io.out(`the broken file is kept as ${corruptCopy}\n`);
    return EXIT.OK;
  },
};
