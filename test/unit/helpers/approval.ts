// Loaded before every unit test (.mocharc.json "require"). The tests build the repositories they
// run, so every CLI they start runs those repositories' commands without asking:
// LAUNCHPAD_TRUST=1 is set here, in mocha's own environment, which every child and every in-process
// `main` inherits (controller/support.ts keeps it through its clean environment). XDG_CONFIG_HOME
// is a folder of this test process, so no test reads or writes the approvals of the person
// running the tests. test/unit/cli/trust.test.ts takes LAUNCHPAD_TRUST out to see the questions.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.LAUNCHPAD_TRUST = '1';
const config = mkdtempSync(join(tmpdir(), 'launchpad-config-'));
process.env.XDG_CONFIG_HOME = config;
process.on('exit', () => rmSync(config, { recursive: true, force: true }));
