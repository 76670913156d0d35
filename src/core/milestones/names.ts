// Names made from a person's text for files and branches. No dependencies: the extension's
// activation path reaches it through paths.ts.

/** A file name part from a name: lower case, letters and digits, single dashes. */
export function slugify(name: string, max = 40): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/, '');
  return slug || 'milestone';
}
