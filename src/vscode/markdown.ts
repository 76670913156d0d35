// Markdown for hovers and documents made from a person's or an agent's text. MarkdownString's
// appendText turns every space into &nbsp; (long lines then never wrap in a hover), so text is
// escaped here instead, and code blocks get a fence longer than any backtick run inside.

/** Text shown literally: Markdown's special characters escaped, whitespace runs and newlines kept as spaces. */
export function escapeMarkdown(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/[\\`*_{}[\]()#+\-.!|<>~&$]/g, '\\$&');
}

export function fencedBlock(text: string, language = 'text'): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${language}\n${text}\n${fence}\n`;
}
