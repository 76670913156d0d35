import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from '../command';
import { createDemoProject } from '../demo/demoProject';
import { runDemoAgent } from '../demo/demoAgent';
import { EXIT, UsageError } from '../exit';
import { logCommand } from './log';
import { runCommand } from './run';
import { statusCommand } from './status';

export const demoCommand: Command = {
  name: 'demo',
  usage: 'launchpad demo [DIR]',
  summary: 'Create a sample repository with six dependent tasks and run it with the built-in demo agent (no AI; two tasks fail once and are retried).',
  details: 'DIR must not exist or be empty; by default a new temporary directory is used. Afterwards, try there:\n' +
    '  launchpad status · launchpad log --task task-002 · git log --graph --oneline',
  options: {},
  positionals: { min: 0, max: 1 },
  async run(ctx) {
    const dir = ctx.positionals[0] ? resolve(ctx.io.cwd, ctx.positionals[0]) : mkdtempSync(join(tmpdir(), 'launchpad-demo-'));
    if (existsSync(dir) && readdirSync(dir).length) throw new UsageError(`demo: ${dir} is not empty; give a new directory`);
    const agent = `"${process.execPath}" "${__filename}" demo-agent`;
    await createDemoProject(dir, agent);
    ctx.io.out(`Demo repository: ${dir}\nAgent: the built-in demo agent (${agent})\n\n`);

    const inDemo = { ...ctx, dir, positionals: [] };
    const code = await runCommand.run({ ...inDemo, values: {} });
    ctx.io.out('\n--- launchpad status ---\n');
    await statusCommand.run({ ...inDemo, values: {} });
    ctx.io.out('\n--- launchpad log --grep "ERROR|RECOVERY|MERGE" ---\n');
    await logCommand.run({ ...inDemo, values: { grep: 'ERROR|RECOVERY|MERGE' } });
    ctx.io.out(`\nThe demo repository stays in ${dir}; \`cd\` there and try \`launchpad status\` or \`git log --graph --oneline\`.\n`);
    return code;
  },
};

/** Internal: the demo's agent process (`launchpad demo-agent`), started by the controller. */
export const demoAgentCommand: Command = {
  name: 'demo-agent',
  usage: 'launchpad demo-agent',
  summary: 'Internal: the deterministic agent the demo runs (reads the LAUNCHPAD_* environment).',
  options: {},
  async run(ctx) {
    await runDemoAgent(ctx.io.env, ctx.io.out);
    return EXIT.OK;
  },
};
