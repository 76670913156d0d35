// Launchpad's hooks in an agent's project settings file, merged with what is there: every other
// key and every other hook entry is kept as it was; installing twice leaves one entry per event;
// removing takes out only entries whose command is one of Launchpad's hooks for that agent.
// A file that cannot be read as a JSON object is refused, naming the line or the field, and left
// as it is.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { replaceFile } from '../atomicFile';
import { InputError } from '../inputError';
import { locateJsonSyntaxError } from '../taskFile/jsonSyntax';
import { AGENT_HOOKS, HOOK_EVENTS, type HookAgent, hookCommand, isOurCommand } from './agents';

export interface HookSettingsOptions {
  remove: boolean;
  /** What runs launchpad in the hook commands: `launchpad` (on PATH) unless told otherwise. */
  commandPrefix: string;
}

export interface HookSettingsEdit {
  text: string;
  changed: boolean;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The settings text with Launchpad's hooks for `agent` installed or removed. `before` undefined
 * is a file that does not exist yet. Pure: tested on literal strings.
 */
export function editHookSettings(agent: HookAgent, before: string | undefined, opts: HookSettingsOptions, label: string): HookSettingsEdit {
  const spec = AGENT_HOOKS[agent];
  const settings = parseSettings(before, label);
  let changed = false;
  let hooks = settings.hooks;
  if (hooks === undefined) hooks = {};
  if (!isObject(hooks)) throw new InputError(`${label}: field "hooks" must be an object; nothing was changed`);

  for (const event of HOOK_EVENTS) {
    const name = spec.events[event];
    const field = `hooks.${name}`;
    const list = hooks[name];
    if (list !== undefined && !Array.isArray(list)) throw new InputError(`${label}: field "${field}" must be a list; nothing was changed`);
    const entries: unknown[] = list ?? [];
    const command = hookCommand(opts.commandPrefix, event, agent);
    const ours = ourCommands(entries, spec.layout, agent, label, field);
    if (!opts.remove && ours.length === 1 && ours[0] === command) continue;
    if (opts.remove && ours.length === 0) continue;

    const kept = withoutOurs(entries, spec.layout, agent);
    if (!opts.remove) {
      const handler = spec.handler(command, event);
      kept.push(spec.layout === 'grouped' ? { hooks: [handler] } : handler);
    }
    if (kept.length) hooks[name] = kept;
    else delete hooks[name];
    changed = true;
  }
  if (!changed) return { text: before ?? '', changed: false };

  if (Object.keys(hooks).length) settings.hooks = hooks;
  else delete settings.hooks;
  // Keys the agent requires (Cursor's version) go first, where its own examples put them.
  const missing = opts.remove ? [] : Object.entries(spec.required ?? {}).filter(([key]) => !Object.hasOwn(settings, key));
  const result = missing.length ? { ...Object.fromEntries(missing), ...settings } : settings;
  return { text: JSON.stringify(result, null, indentOf(before)) + '\n', changed: true };
}

function parseSettings(text: string | undefined, label: string): Json {
  if (text === undefined || !text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const at = locateJsonSyntaxError(text);
    const where = at ? `line ${at.line}, column ${at.column}: ${at.message}` : (err as Error).message;
    throw new InputError(`${label}: ${where}; nothing was changed`);
  }
  if (!isObject(value)) throw new InputError(`${label}: expected a JSON object at the top level; nothing was changed`);
  return value;
}

/** The commands of Launchpad's handlers in one event's list, checking the shape on the way. */
function ourCommands(entries: unknown[], layout: 'grouped' | 'flat', agent: HookAgent, label: string, field: string): string[] {
  const found: string[] = [];
  entries.forEach((entry, i) => {
    if (!isObject(entry)) throw new InputError(`${label}: field "${field}[${i}]" must be an object; nothing was changed`);
    if (layout === 'flat') {
      if (isOurCommand(entry.command, agent)) found.push(entry.command as string);
      return;
    }
    const handlers = entry.hooks;
    if (handlers === undefined) return;
    if (!Array.isArray(handlers)) throw new InputError(`${label}: field "${field}[${i}].hooks" must be a list; nothing was changed`);
    for (const h of handlers) if (isObject(h) && isOurCommand(h.command, agent)) found.push(h.command as string);
  });
  return found;
}

/** The list without Launchpad's handlers; a group left empty by that goes too. */
function withoutOurs(entries: unknown[], layout: 'grouped' | 'flat', agent: HookAgent): unknown[] {
  const out: unknown[] = [];
  for (const entry of entries as Json[]) {
    if (layout === 'flat') {
      if (!isOurCommand(entry.command, agent)) out.push(entry);
      continue;
    }
    const handlers = entry.hooks as unknown[] | undefined;
    const rest = handlers?.filter((h) => !(isObject(h) && isOurCommand(h.command, agent)));
    if (!handlers || rest!.length === handlers.length) out.push(entry);
    else if (rest!.length) out.push({ ...entry, hooks: rest });
  }
  return out;
}

/** The file's own indentation (two spaces for a new file), so a rewrite changes only our lines. */
function indentOf(text: string | undefined): string | number {
  const m = text ? /\n([ \t]+)\S/.exec(text) : null;
  return m ? m[1]! : 2;
}

export interface HookInstallResult {
  agent: HookAgent;
  /** The settings file, absolute. */
  file: string;
  changed: boolean;
}

/** Installs (or removes) the hooks in `<stateRoot>/<the agent's settings file>`. */
export function installAgentHooks(stateRoot: string, agent: HookAgent, opts: HookSettingsOptions): HookInstallResult {
  const relative = AGENT_HOOKS[agent].settingsFile;
  const file = join(stateRoot, relative);
  const before = readIfExists(file);
  if (before === undefined && opts.remove) return { agent, file, changed: false };
  const edit = editHookSettings(agent, before, opts, relative);
  if (edit.changed) {
    // Replaced whole: the agent never reads a half-written settings file.
    replaceFile(file, edit.text);
  }
  return { agent, file, changed: edit.changed };
}

/** Whether both of Launchpad's hooks are in the agent's settings file (false when unreadable). */
export function agentHooksInstalled(stateRoot: string, agent: HookAgent): boolean {
  const spec = AGENT_HOOKS[agent];
  const text = readIfExists(join(stateRoot, spec.settingsFile));
  if (text === undefined) return false;
  try {
    const hooks = parseSettings(text, spec.settingsFile).hooks;
    return (
      isObject(hooks) &&
      HOOK_EVENTS.every((e) => {
        const list = hooks[spec.events[e]];
        return Array.isArray(list) && ourCommands(list, spec.layout, agent, spec.settingsFile, e).length > 0;
      })
    );
  } catch {
    return false;
  }
}

function readIfExists(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
