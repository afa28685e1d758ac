/**
 * Where the OAuth callback may send the browser back to: a path on this origin, or an origin on
 * the configured allow-list. Anything a browser could read as another origin is refused: `//host`,
 * `/\host`, a backslash anywhere, a scheme other than http(s) (`javascript:`), `https:host`
 * (no slashes), userinfo, control or space characters, and the same after percent-decoding, and
 * after normalising (dot segments: `/..//host`, `/%2e%2e//host`, `/a/.././/host`).
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

const RELATIVE_BASE = 'http://relative.invalid';

/** `text` read as a path on this origin stays one once normalised (dot segments resolved). */
function staysLocal(text: string): boolean {
  if (!text.startsWith('/') || /^\/[/\\]/.test(text)) return false;
  try {
    const url = new URL(text, RELATIVE_BASE);
    return url.origin === RELATIVE_BASE && !/^\/[/\\]/.test(url.pathname);
  } catch {
    return false;
  }
}

/**
 * A path that is neither a scheme-relative `//host` nor `/\host`, as written, after
 * percent-decoding, and after normalising either (so a target that a later decode-and-redirect
 * would turn into `//host`, such as `/..%2f/host`, is refused too).
 */
function isLocalPath(path: string): boolean {
  const decoded = decodeRepeatedly(path);
  if (decoded === undefined || /[\u0000-\u0020\u007f\\]/.test(decoded)) return false;
  return staysLocal(path) && staysLocal(decoded);
}

/**
 * The redirect target `raw`, normalised the way a browser and `URL` resolve it (dot segments,
 * `%2e%2e`, case of the scheme and host), when the normalised target is allowed; otherwise
 * undefined. Normalising first, then checking, is what keeps `/..//evil.example` (which resolves
 * to `//evil.example`) out: the checks run on what is used, and the normalised text is what is
 * stored and sent.
 */
export function allowedRedirect(raw: string, allowedOrigins: readonly string[]): string | undefined {
  if (raw.length === 0 || raw.length > MAX_LENGTH) return undefined;
  // Control characters, spaces and backslashes: browsers strip or reinterpret them.
  if (/[\u0000-\u0020\u007f-\u00a0\u2028\u2029\ufeff\\]/.test(raw)) return undefined;
  const decoded = decodeRepeatedly(raw);
  if (decoded === undefined || /[\u0000-\u0020\u007f\\]/.test(decoded)) return undefined;
  if (raw.startsWith('/')) {
    if (!isLocalPath(raw)) return undefined;
    let url: URL;
    try {
      url = new URL(raw, RELATIVE_BASE);
    } catch {
      return undefined;
    }
    if (url.origin !== RELATIVE_BASE) return undefined;
    const normalised = `${url.pathname}${url.search}${url.hash}`;
    return isLocalPath(normalised) && normalised.length <= MAX_LENGTH ? normalised : undefined;
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
  // The path part obeys the same rule as a relative target, for the page that reads it next.
  if (!isLocalPath(`${url.pathname}${url.search}${url.hash}`)) return undefined;
  const normalised = url.href;
  return normalised.length <= MAX_LENGTH ? normalised : undefined;
}

/**
 * `target` (an allowed, normalised redirect) with one query parameter added; relative paths stay
 * relative. Refuses (throws) to produce anything a browser would read as another origin.
 */
export function withQueryParameter(target: string, name: string, value: string): string {
  const relative = target.startsWith('/');
  const url = new URL(target, RELATIVE_BASE);
  url.searchParams.set(name, value);
  const out = relative ? `${url.pathname}${url.search}${url.hash}` : url.toString();
  if (relative && (url.origin !== RELATIVE_BASE || !isLocalPath(out))) throw new Error('redirect target is not a local path once normalised');
  return out;
}
