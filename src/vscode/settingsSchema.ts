// The settings' shape, validated with zod; loaded with the core on first use (coreLoader.ts).
import * as z from 'zod/mini';

const settingsSchema = z.object({
  agentCommand: z.optional(z.string()),
  worktreeLocation: z.optional(z.string()),
  maxParallelAgents: z.optional(z.int().check(z.gte(1), z.lte(32))),
});
export type LaunchpadSettings = z.infer<typeof settingsSchema>;

/** The valid settings, and one problem per invalid one (`key: message`). */
export function parseSettings(raw: Record<string, unknown>): { settings: LaunchpadSettings; invalid: Array<{ key: string; message: string }> } {
  const parsed = settingsSchema.safeParse(raw);
  if (parsed.success) return { settings: parsed.data, invalid: [] };
  const invalid = parsed.error.issues.map((i) => ({ key: String(i.path[0]), message: i.message }));
  const bad = new Set(invalid.map((i) => i.key));
  return { settings: Object.fromEntries(Object.entries(raw).filter(([k]) => !bad.has(k))) as LaunchpadSettings, invalid };
}
