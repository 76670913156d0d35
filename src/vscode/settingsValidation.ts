// The settings' values checked with zod, from their declarations (settingsSchema.ts). Loaded with
// the core on first use (coreLoader.ts): building zod schemas costs time activation does not have.
import * as z from 'zod/mini';

import { type LaunchpadSettings, SETTING_DECLARATIONS, type SettingDeclaration } from './settingsSchema';

function valueSchema(s: SettingDeclaration) {
  if (s.type === 'string') return s.enum ? z.enum(s.enum as [string, ...string[]]) : z.string();
  return z.int().check(z.gte(s.minimum), z.lte(s.maximum));
}

const settingsSchema = z.object(
  Object.fromEntries(
    Object.entries(SETTING_DECLARATIONS).map(([name, s]: [string, SettingDeclaration]) => [name, z.optional(valueSchema(s))]),
  ),
);

/** The valid settings, and one problem per invalid one (`name: message`). */
export function parseSettings(raw: Record<string, unknown>): {
  settings: LaunchpadSettings;
  invalid: Array<{ key: string; message: string }>;
} {
  const parsed = settingsSchema.safeParse(raw);
  if (parsed.success) return { settings: parsed.data as LaunchpadSettings, invalid: [] };
  const invalid = parsed.error.issues.map((i) => ({ key: String(i.path[0]), message: i.message }));
  const bad = new Set(invalid.map((i) => i.key));
  return { settings: Object.fromEntries(Object.entries(raw).filter(([k]) => !bad.has(k))) as LaunchpadSettings, invalid };
}
