/**
 * Where the OAuth callback may send the browser back to: a path on this origin, or an origin on
 * the configured allow-list. Anything a browser could read as another origin is refused: `//host`,
 * `/\host`, a backslash anywhere, a scheme other than http(s) (`javascript:`), `https:host`
 * (no slashes), userinfo, control or space characters, and the same after percent-decoding.
 */
const MAX_LENGTH = 2048;

function decodeRepeatedly(value: string): string | undefined {
  let current = value;
  for (let i = 0; i < 4; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return undefined;
    }
    if (next === current) return current;
    current = next;
  }
  return current;
}

/** The redirect target `raw` as given when it is allowed, or undefined. */
export function allowedRedirect(raw: string, allowedOrigins: readonly string[]): string | undefined {
  if (raw.length === 0 || raw.length > MAX_LENGTH) return undefined;
  // Control characters, spaces and backslashes: browsers strip or reinterpret them.
  if (/[\u0000-\u0020\u007f-\u00a0\u2028\u2029\ufeff\\]/.test(raw)) return undefined;
  const decoded = decodeRepeatedly(raw);
  if (decoded === undefined || /[\u0000-\u0020\u007f\\]/.test(decoded)) return undefined;
  if (raw.startsWith('/')) {
    // A path: one slash, then not another slash (scheme-relative //host), before or after decoding.
    if (raw.startsWith('//') || decoded.startsWith('//')) return undefined;
    return raw;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username || url.password) return undefined;
  const origin = url.origin.toLowerCase();
  if (!allowedOrigins.includes(origin)) return undefined;
  // The text itself must begin with the origin, so no parser reads it differently (https:host, https:/host).
  const rest = raw.slice(origin.length);
  if (raw.slice(0, origin.length).toLowerCase() !== origin || (rest !== '' && !rest.startsWith('/'))) return undefined;
  return raw;
}

/** `target` with one query parameter added (relative paths stay relative). */
export function withQueryParameter(target: string, name: string, value: string): string {
  const relative = target.startsWith('/');
  const url = new URL(target, 'http://relative.invalid');
  url.searchParams.set(name, value);
  return relative ? `${url.pathname}${url.search}${url.hash}` : url.toString();
}
