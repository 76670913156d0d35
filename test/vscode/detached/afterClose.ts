// The runner's --after-close check for the detached suite (closeEditor.test.ts), in plain node
// once the browser and code-server are gone: `launchpad status --json`, as a person would type it
// in a terminal, shows the run progressing, and the run completes with each task merged once.
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';

export const CLOSE_IDS = ['close-1', 'close-2', 'close-3', 'close-4'];

const CLI = path.resolve(__dirname, '../../../../dist/cli.js');

interface Status {
  active_session: { pid: number } | null;
  completed: number;
  in_progress: number;
  pending: number;
}

interface TestResult {
  title: string;
  state: 'passed' | 'failed';
  error?: { message: string };
}

export async function afterClose(workspace: string, log: (line: string) => void): Promise<TestResult[]> {
  const status = (): Status =>
    JSON.parse(execFileSync(process.execPath, [CLI, 'status', '--json', '--dir', workspace], { encoding: 'utf8' })) as Status;
  const results: TestResult[] = [];
  const check = async (title: string, body: () => Promise<void> | void) => {
    try {
      await body();
      results.push({ title: `closing the editor mid-run ${title}`, state: 'passed' });
    } catch (err) {
      results.push({ title: `closing the editor mid-run ${title}`, state: 'failed', error: { message: (err as Error).message } });
    }
  };
  const seen: Status[] = [];
  await check('the run goes on: launchpad status shows it progressing with no editor open', async () => {
    for (const end = Date.now() + 90_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
      const s = status();
      const last = seen.at(-1);
      if (!last || last.completed !== s.completed || last.in_progress !== s.in_progress)
        log(`status: ${s.completed} completed, ${s.in_progress} in progress, run ${s.active_session?.pid ?? 'none'}`);
      seen.push(s);
      if (!s.active_session) break;
    }
    const first = seen[0]!;
    if (!first.active_session) throw new Error('no run was going when the editor had closed');
    if (!seen.some((s) => s.active_session && s.completed > first.completed))
      throw new Error(`no progress while the editor was closed: ${seen.map((s) => s.completed).join(' ')} completed`);
  });
  await check('the run completes, each task merged once', () => {
    const last = status();
    if (last.active_session) throw new Error(`still running after 90 s: ${last.completed} completed`);
    if (last.completed !== CLOSE_IDS.length) throw new Error(`not every task completed: ${last.completed} of ${CLOSE_IDS.length}`);
    const merges = execFileSync('git', ['log', '--merges', '--format=%s'], { cwd: workspace, encoding: 'utf8' });
    for (const id of CLOSE_IDS) {
      const n = merges.split('\n').filter((l) => l.startsWith(`Merge [${id}]`)).length;
      if (n !== 1) throw new Error(`${id} merged ${n} times`);
    }
  });
  return results;
}
