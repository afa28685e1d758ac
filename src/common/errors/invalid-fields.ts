import type { ErrorDetailSection } from './error-body';

/** At most this many problems are listed in an error body; the rest are counted. */
export const MAX_LISTED_PROBLEMS = 20;
const MAX_ITEM_LENGTH = 300;

/** Caps a list of problems: long items are cut, and past the cap one last item says how many were left out. */
export function capList(items: readonly string[], max = MAX_LISTED_PROBLEMS): string[] {
  const cut = (item: string) => (item.length > MAX_ITEM_LENGTH ? `${item.slice(0, MAX_ITEM_LENGTH)}…` : item);
  if (items.length <= max) return items.map(cut);
  return [...items.slice(0, max).map(cut), `… and ${items.length - max} more`];
}

/**
 * The detail section that names the invalid fields or parameters of a request, as
 * `path: what is wrong` lines, capped so that an error body stays small whatever the input.
 */
export function invalidFields(items: readonly string[], title = 'Invalid fields'): ErrorDetailSection {
  return { title, render: 'list', items: capList(items) };
}
