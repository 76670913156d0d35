// What an agent sends a hook on stdin, reduced to what Launchpad's hooks use. The agents share
// most field names (session_id, cwd, stop_hook_active, source); Cursor names its session
// conversation_id, gives workspace_roots instead of a cwd, counts loop_count instead of
// stop_hook_active, and reports an aborted turn in `status`.

export interface HookInput {
  /** Where the agent works; the state root is found from here. */
  cwd: string | undefined;
  sessionId: string | undefined;
  /** The agent is already continuing because a stop hook refused its last stop. */
  stopHookActive: boolean;
  /** How the session started: startup, resume, clear, compact. */
  source: string | undefined;
  /** The person stopped the agent (or it failed): never refuse such a stop. */
  interrupted: boolean;
}

/** Never throws: a hook must not break the agent over input it cannot read. */
export function parseHookInput(text: string): HookInput {
  let raw: unknown;
  try {
    raw = text.trim() ? JSON.parse(text) : {};
  } catch {
    raw = {};
  }
  const o = typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const roots = Array.isArray(o.workspace_roots) ? o.workspace_roots : [];
  return {
    cwd: str(o.cwd) ?? str(roots[0]),
    sessionId: str(o.session_id) ?? str(o.conversation_id) ?? str(o.sessionId),
    stopHookActive: o.stop_hook_active === true || (typeof o.loop_count === 'number' && o.loop_count > 0),
    source: str(o.source),
    interrupted: o.status === 'aborted' || o.status === 'error',
  };
}
