// Hooks every test file gets, as a mocha root hook plugin (.mocharc.json "require"): in a
// parallel run a helper module is loaded once per worker, so a top-level after() in it would
// serve only the first file that worker runs. Helpers register their clean-up here instead.
type Hook = () => unknown;

const afterEachHooks: Hook[] = [];
const afterAllHooks: Hook[] = [];

/** Runs after every test (a failed one included): ends what the test started. */
export function afterEveryTest(hook: Hook): void {
  afterEachHooks.push(hook);
}

/** Runs after every test file: removes what its tests made. */
export function afterEveryFile(hook: Hook): void {
  afterAllHooks.push(hook);
}

export const mochaHooks = {
  async afterEach(this: Mocha.Context) {
    for (const hook of afterEachHooks) await hook();
  },
  async afterAll(this: Mocha.Context) {
    // Many repositories and worktrees: give it time on a loaded machine.
    this.timeout(300_000);
    for (const hook of afterAllHooks) await hook();
  },
};
