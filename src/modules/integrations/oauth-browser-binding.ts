import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Binds an OAuth flow to the browser that starts it. GET /scm/authorize sets a cookie holding a
 * random nonce (its SHA-256 is stored with the state) before sending the browser to the provider;
 * GET /scm/callback requires the same cookie. A person sent the provider's link (or who completes
 * the authorization anywhere else) comes back without it, and nothing is connected.
 *
 * The cookie is `__Host-` prefixed: Secure, no Domain, Path=/, so no other host or path can set
 * or read it; HttpOnly; SameSite=Lax, so the top-level GET from the provider back to the callback
 * carries it and no cross-site subrequest does. One cookie per flow (its name carries the state's
 * row id), so two flows in one browser do not overwrite each other. Pure: no Nest, no I/O.
 */
export const FLOW_COOKIE_PREFIX = '__Host-dpa-oauth-';

export interface FlowCookie {
  name: string;
  value: string;
  options: { secure: true; httpOnly: true; sameSite: 'lax'; path: '/'; maxAge: number };
}

export function flowCookieName(stateId: string): string {
  return `${FLOW_COOKIE_PREFIX}${stateId.replace(/[^A-Za-z0-9-]/g, '')}`;
}

export function newBrowserNonce(): { nonce: string; hash: string } {
  const nonce = randomBytes(32).toString('base64url');
  return { nonce, hash: hashNonce(nonce) };
}

export function hashNonce(nonce: string): string {
  return createHash('sha256').update(nonce).digest('hex');
}

export function flowCookie(stateId: string, nonce: string, maxAgeMs: number): FlowCookie {
  return { name: flowCookieName(stateId), value: nonce, options: { secure: true, httpOnly: true, sameSite: 'lax', path: '/', maxAge: Math.max(0, maxAgeMs) } };
}

/** The value of cookie `name` in a `Cookie` request header (the first one), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    return value;
  }
  return undefined;
}

/** Whether `nonce` (from the cookie) is the one whose hash was stored: constant time. */
export function nonceMatches(nonce: string | undefined, storedHash: string | null): boolean {
  if (!nonce || !storedHash || nonce.length > 256) return false;
  const given = Buffer.from(hashNonce(nonce), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}
