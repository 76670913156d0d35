// Colour for people, never for pipes: on when stdout is a terminal, off with --no-color or
// NO_COLOR (any non-empty value), forced with FORCE_COLOR (except 0 or false), which, as in
// node itself, takes precedence over NO_COLOR. --no-color is the person at the keyboard
// and beats both.

export type Paint = (text: string) => string;

export interface Colours {
  enabled: boolean;
  red: Paint;
  green: Paint;
  yellow: Paint;
  cyan: Paint;
  magenta: Paint;
  dim: Paint;
  bold: Paint;
}

export function colourWanted(env: NodeJS.ProcessEnv, stdoutIsTTY: boolean, noColorFlag: boolean): boolean {
  if (noColorFlag) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== '0' && force.toLowerCase() !== 'false';
  if (env.NO_COLOR) return false;
  return stdoutIsTTY && env.TERM !== 'dumb';
}

const sgr =
  (open: number, close: number): Paint =>
  (text) =>
    text ? `\x1b[${open}m${text}\x1b[${close}m` : text;
const plain: Paint = (text) => text;

export function colours(enabled: boolean): Colours {
  if (!enabled) return { enabled, red: plain, green: plain, yellow: plain, cyan: plain, magenta: plain, dim: plain, bold: plain };
  return {
    enabled,
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    magenta: sgr(35, 39),
    dim: sgr(2, 22),
    bold: sgr(1, 22),
  };
}

/** The text without colour codes, as wide as a terminal shows it (one column per code unit). */
export function stripAnsi(text: string): string {
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}
