import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import { type Command, shellQuote } from '../command';
import { runDemoAgent } from '../demo/demoAgent';
import { createDemoProject } from '../demo/demoProject';
import { EXIT, UsageError } from '../exit';
import { launchpadCommand } from '../invocation';
import { runCommand } from './run';

export const demoCommand: Command = {
  name: 'demo',
  usage: 'launchpad demo [DIR]',
  summary:
    'Create a sample repository with six dependent tasks and run it with the built-in demo agent (no AI; two tasks fail once and are retried).',
  details:
    'DIR (or --dir DIR) must not exist or be empty; by default a new temporary directory is used. At the end the demo prints\n' +
    'the commands that show the result, complete with the path of this CLI and the demo directory.',
  options: {},
  globals: ['dir', 'no-color'],
  positionals: { min: 0, max: 1 },
  async run(ctx) {
    if (ctx.positionals[0] && ctx.dir) throw new UsageError('demo: give the directory once, as DIR or as --dir');
    const given = ctx.positionals[0] ?? ctx.dir;
    const dir = given ? resolve(ctx.io.cwd, given) : mkdtempSync(join(tmpdir(), 'launchpad-demo-'));
    if (existsSync(dir) && readdirSync(dir).length) throw new UsageError(`demo: ${dir} is not empty; give a new directory`);
    const agent = `"${process.execPath}" "${__filename}" demo-agent`;
    await createDemoProject(dir, agent);
    const c = ctx.colour;
    ctx.io.out(
      `${c.bold('Demo repository:')} ${dir}\n${c.dim('Six tasks, three at a time, run by the built-in demo agent (no AI): task-002 fails its validation once and task-006 gives up once; both are retried with the error in their prompt.')}\n\n`,
    );

    // The commands are the demo's own, written just now: approved for this run.
    const code = await runCommand.run({ ...ctx, dir, positionals: [], values: { 'no-color': ctx.values['no-color'], trust: true } });

    const launchpad = launchpadCommand(ctx.io.env);
    const at = `${launchpad} --dir ${shellQuote(dir)}`;
    const lines = [
      '',
      c.bold('Look at the result (each command works as it is, from any directory):'),
      `  ${at} status`,
      `  ${at} log --type ERROR,RECOVERY,MERGE`,
      `  ${at} log --task task-002`,
      `  git -C ${shellQuote(dir)} log --graph --oneline`,
    ];
    if (launchpad !== 'launchpad') {
      lines.push(`To type "launchpad" instead of "${launchpad}": run npm link in ${dirname(dirname(__filename))}`);
    }
    ctx.io.out(lines.join('\n') + '\n');
    return code;
  },
};

/** Internal: the demo's agent process (`launchpad demo-agent`), started by the controller. */
export const demoAgentCommand: Command = {
  name: 'demo-agent',
  usage: 'launchpad demo-agent',
  summary: 'Internal: the deterministic agent the demo runs (reads the LAUNCHPAD_* environment).',
  options: {},
  globals: [],
  async run(ctx) {
    await runDemoAgent(ctx.io.env, ctx.io.out);
    return EXIT.OK;
  },
};
