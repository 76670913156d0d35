import { HOOK_AGENTS, HOOK_EVENTS, type HookEvent, isHookAgent } from '../../core/hooks/agents';
import { runHook } from '../../core/hooks/runHook';
import type { Command } from '../command';
import { EXIT, UsageError } from '../exit';

export const hookCommand: Command = {
  name: 'hook',
  usage: `launchpad hook ${HOOK_EVENTS.join('|')} [--agent ${HOOK_AGENTS.join('|')}]`,
  summary: 'The agent hooks themselves (run by the agent, with its JSON on stdin). Installed by "launchpad hooks install".',
  details: [
    'session-start prints the state a fresh context needs; stop prints the agent\'s "keep working" answer while the',
    'current task is not validated or eligible tasks remain, and nothing when the agent may stop. Without',
    ".harness-active in the state root (found upward from the input's cwd, or $HARNESS_STATE_ROOT) both print nothing.",
    'Errors exit 1, never 2: agents read 2 from a hook as a refusal.',
  ].join('\n'),
  options: {
    agent: { type: 'string', value: 'AGENT', help: `whose JSON to read and write: ${HOOK_AGENTS.join(', ')} (default claude)` },
    verbose: { type: 'boolean', short: 'v', help: 'say on stderr why the hook answered as it did' },
  },
  positionals: { min: 1, max: 1 },
  failureExit: 1,
  async run(ctx) {
    const event = ctx.positionals[0]!;
    if (!(HOOK_EVENTS as readonly string[]).includes(event))
      throw new UsageError(`hook: unknown event "${event}"; events: ${HOOK_EVENTS.join(', ')}`);
    const agent = typeof ctx.values.agent === 'string' ? ctx.values.agent : 'claude';
    if (!isHookAgent(agent)) throw new UsageError(`hook: unknown agent "${agent}"; agents: ${HOOK_AGENTS.join(', ')}`);
    const stdin = (await ctx.io.readStdin?.()) ?? '';
    const result = runHook({ agent, event: event as HookEvent, stdin, cwd: ctx.io.cwd, env: ctx.io.env, dir: ctx.dir });
    ctx.io.out(result.stdout);
    if (ctx.values.verbose) ctx.io.err(`launchpad hook ${event}: ${result.note}\n`);
    return EXIT.OK;
  },
};
