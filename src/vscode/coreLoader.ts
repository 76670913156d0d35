// The costly part of the core, loaded on first use (the model's first load, a command) so that
// activation stays within its budget (code load + activate ≤ 50 ms, `npm run bench`). Import it only
// through here: a static import of coreModules (or of what it re-exports) anywhere on the
// activation path would load it all again at startup.
export type Core = typeof import('./coreModules');

export const loadCore = (): Promise<Core> => import('./coreModules');
