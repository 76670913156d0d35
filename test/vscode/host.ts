// Helpers for tests running inside the VS Code host under scripts/vscode-host/run.mjs.
// Outside it (e.g. @vscode/test-cli on desktop VS Code) they quietly do nothing.
import * as fs from 'node:fs';
import * as path from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Asks the runner for a PNG of the workbench as it is now (e.g. after opening a view) and waits
 * until it is written. Returns the file, or undefined when no runner is listening.
 */
export async function requestScreenshot(name: string, timeoutMs = 15_000): Promise<string | undefined> {
  const dir = process.env.HOST_TEST_SCREENSHOT_DIR;
  if (!dir) return undefined;
  const base = path.join(dir, name.replace(/[^\w.-]+/g, '-'));
  fs.writeFileSync(`${base}.request`, '');
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(100)) {
    if (fs.existsSync(`${base}.done`)) {
      keepForReadme(name, `${base}.png`);
      return `${base}.png`;
    }
  }
  throw new Error(`no screenshot ${base}.png within ${timeoutMs} ms`);
}

/** The screenshots README.md shows, as media/screenshots/<name>.png. */
export const README_SCREENSHOTS = ['sidebar-after-run', 'progress-log', 'task-graph'];

/**
 * A run with UPDATE_MEDIA_SCREENSHOTS=1 (`--env UPDATE_MEDIA_SCREENSHOTS=1`) refreshes the
 * README's copies; other runs leave the tree as it is.
 */
function keepForReadme(name: string, png: string): void {
  if (process.env.UPDATE_MEDIA_SCREENSHOTS !== '1' || !README_SCREENSHOTS.includes(name)) return;
  const repo = path.resolve(__dirname, '..', '..', '..'); // out/test/vscode/ → the repository
  fs.mkdirSync(path.join(repo, 'media', 'screenshots'), { recursive: true });
  fs.copyFileSync(png, path.join(repo, 'media', 'screenshots', `${name}.png`));
}

/** The visible text of the workbench's parts when a screenshot was taken (innerText: cut labels are whole). */
export interface ScreenText {
  sidebar: string;
  editor: string;
  panel: string;
  statusbar: string;
}

/** A screenshot, and the text of the workbench as it shows; undefined when no runner is listening. */
export async function requestScreen(name: string, timeoutMs?: number): Promise<{ png: string; text: ScreenText } | undefined> {
  const png = await requestScreenshot(name, timeoutMs);
  if (!png) return undefined;
  const text = JSON.parse(fs.readFileSync(png.replace(/\.png$/, '.json'), 'utf8')) as ScreenText & { error?: string };
  if (text.error) throw new Error(`the runner could not read the workbench's text: ${text.error}`);
  return { png, text };
}

/** The folder the extension under test must load from: the dev folder, or the .vsix install dir. */
export const expectedExtensionRoot = (): string | undefined => process.env.HOST_TEST_EXTENSION_ROOT;

export async function waitFor(what: string, check: () => boolean, timeoutMs = 90_000): Promise<void> {
  for (const end = Date.now() + timeoutMs; Date.now() < end; await sleep(100)) if (check()) return;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/**
 * Asks the runner to close the editor as a person quits it: the browser and code-server are
 * killed (this extension host with them) and the runner's --after-close module checks what
 * goes on. Never returns under the runner; elsewhere it throws.
 */
export async function requestEditorClose(): Promise<never> {
  const dir = process.env.HOST_TEST_SCREENSHOT_DIR;
  if (!dir) throw new Error('no runner listening: the editor cannot be closed from a test here');
  fs.writeFileSync(path.join(dir, 'close-editor.request'), '');
  return new Promise<never>(() => undefined);
}
