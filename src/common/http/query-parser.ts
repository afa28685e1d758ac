import { parse } from 'qs';

/**
 * The most values one query parameter may carry as an array, repeated (`a=1&a=2`) or indexed
 * (`a[0]=1`). qs turns anything past its default of 20 into an object keyed by index, which a
 * route validating an array then refused as "not an array" (or "at most 50"): generated clients
 * send arrays as repeated parameters. Routes still bound their own arrays (e.g. 50 ids).
 */
export const QUERY_ARRAY_LIMIT = 1000;

/**
 * Express's `extended` query parser (qs, with the options Express gives it) with a useful
 * array limit; an index past the limit still makes an object, which validation refuses.
 */
export function parseQueryString(query: string): Record<string, unknown> {
  return parse(query, { allowPrototypes: true, arrayLimit: QUERY_ARRAY_LIMIT, parameterLimit: 1000 });
}
