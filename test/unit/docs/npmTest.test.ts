// `npm test` (scripts/test.mjs) as CONTRIBUTING.md describes it, run over a package whose stages
// are small node programs: each stage's time printed, the first failure ending the run, and a
// Ctrl-C (SIGINT to the whole process group, as a terminal sends it) stopping it in the stage it
// reached instead of going on to the next as if that stage had passed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { waitFor } from '../controller/support';
import { tempDir } from '../helpers/tmp';
import { ROOT } from './readmeBlocks';

const SCRIPT = join(ROOT, 'scripts/test.mjs');
const STAGES = ['build', 'typecheck', 'lint', 'test:unit', 'test:agents', 'test:vscode'];

/** A package whose stage `hang` waits until killed (after writing `<stage>.started`); the others mark that they ran. */
function fakePackage(stage: { hang?: string; fail?: string }): string {
  const dir = tempDir('launchpad-npmtest-');
  const scripts: Record<string, string> = {};
  for (const s of STAGES) {
    const mark = `require('fs').writeFileSync(${JSON.stringify(`${s.replace(':', '-')}.started`)}, '')`;
    const body = s === stage.hang ? `${mark}; setInterval(() => {}, 1000)` : s === stage.fail ? `${mark}; process.exit(3)` : mark;
    scripts[s] = `node -e "${body.replace(/"/g, '\\"')}"`;
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fake', version: '1.0.0', private: true, scripts }));
  return dir;
}

function npmTest(dir: string): { pid: number; done: Promise<{ code: number | null; stdout: string }> } {
  const child = spawn(process.execPath, [SCRIPT], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.resume();
  const done = new Promise<{ code: number | null; stdout: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout })));
  return { pid: child.pid!, done };
}

describe('npm test (scripts/test.mjs)', function () {
  this.timeout(60_000);

  it('runs every stage in order and prints each one with its time, then the total', async () => {
    const dir = fakePackage({});
    const r = await npmTest(dir).done;
    assert.equal(r.code, 0, r.stdout);
    for (const s of STAGES) assert.ok(existsSync(join(dir, `${s.replace(':', '-')}.started`)), `${s} did not run`);
    assert.match(r.stdout, /^build +\d+:\d\d {2}ok$/m);
    assert.match(r.stdout, /^vscode +\d+:\d\d {2}ok$/m);
    assert.match(r.stdout, /^total +\d+:\d\d$/m);
  });

  it('the first stage that fails ends the run with its exit code', async () => {
    const dir = fakePackage({ fail: 'lint' });
    const r = await npmTest(dir).done;
    assert.equal(r.code, 3, r.stdout);
    assert.match(r.stdout, /^lint +\d+:\d\d {2}FAILED \(exit 3\)$/m);
    assert.ok(!existsSync(join(dir, 'test-unit.started')), 'the stage after the failed one ran');
  });

  it('Ctrl-C during a stage stops npm test there: exit 130, the summary, no later stage', async () => {
    const dir = fakePackage({ hang: 'test:unit' });
    const run = npmTest(dir);
    const r = await (async () => {
      try {
        await waitFor('the unit stage to start', () => existsSync(join(dir, 'test-unit.started')));
        process.kill(-run.pid, 'SIGINT');
        return await run.done;
      } finally {
        // Whatever happened above, nothing of the fake run outlives the test.
        try {
          process.kill(-run.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    })();
    assert.equal(r.code, 130, r.stdout);
    assert.match(r.stdout, /^unit +\d+:\d\d {2}interrupted \(SIGINT\)$/m);
    assert.match(r.stdout, /^total +\d+:\d\d$/m);
    assert.ok(!existsSync(join(dir, 'test-agents.started')), 'npm test went on to the next stage after Ctrl-C');
  });
});
