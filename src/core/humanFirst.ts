// A line a person reads where space is short (a notification, a desktop notice, a tooltip): what
// happened in words first, then the ids and fields. Where it must be cut, the technical tail
// goes first and the words last, so a cut never takes the title and leaves the ids.

/** Shorter than `max` characters, marked with `…` where cut. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return max <= 1 ? '…'.slice(0, max) : `${text.slice(0, max - 1).trimEnd()}…`;
}

/**
 * `human` then ` ` and `technical`, on one line of at most `max` characters: the technical part
 * is cut first; only when the human part alone is too long is it cut too, and the technical part
 * left out.
 */
export function humanFirst(human: string, technical: string, max: number): string {
  const words = human.replace(/\s+/g, ' ').trim();
  const tail = technical.replace(/\s+/g, ' ').trim();
  if (!tail) return cut(words, max);
  const room = max - words.length - 1;
  // A tail cut to a few characters says nothing: leave it out instead.
  if (room < Math.min(tail.length, 12)) return cut(words, max);
  return `${words} ${cut(tail, room)}`;
}
