import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ERROR_PAGE_HEADERS, escapeHtml } from './oauth-error-page';

/**
 * The second half of binding an OAuth connection to the member who started it (issue 41). The
 * callback does not make the integration ACTIVE: it shows, in the browser that authorized, the
 * connected account's login and a one-time confirmation code, and the integration waits
 * (PENDING_CONFIRMATION) until the member who started it calls POST /integrations/{id}/confirm
 * with their own credentials, the login they expect and that code. A start link someone else
 * opened (forwarded, leaked, or sent to a victim by the member) therefore connects nothing unless
 * the person who authorized hands the code over, and the page tells them what that means.
 * Pure: no Nest, no I/O.
 */

/** How long after the provider authorized the member may confirm. */
export const CONFIRMATION_TTL_MS = 60 * 60_000;

/** The fragment parameter the page's "continue" link carries the code in (fragments are not sent to servers or in Referer). */
export const CONFIRMATION_FRAGMENT = 'integration_confirmation';

/** 20 random bytes in Crockford base32, in groups of four: typed by a person if need be. */
export function newConfirmationCode(): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const bytes = randomBytes(20);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out.match(/.{1,4}/g)!.join('-');
}

/** The code as compared: upper case, without separators or spaces, O read as 0 and I/L as 1 (Crockford). */
function canonical(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}

export function hashConfirmationCode(code: string): string {
  return createHash('sha256').update(canonical(code)).digest('hex');
}

/** Whether `code` is the one whose hash was stored: constant time. */
export function confirmationCodeMatches(code: string, storedHash: string | null): boolean {
  if (!storedHash || code.length > 100) return false;
  const given = Buffer.from(hashConfirmationCode(code), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return given.length === stored.length && timingSafeEqual(given, stored);
}

/** `target` (an allowed, normalised redirect) with its fragment replaced by `name=value`. */
export function withFragment(target: string, name: string, value: string): string {
  const hash = target.indexOf('#');
  return `${hash < 0 ? target : target.slice(0, hash)}#${new URLSearchParams({ [name]: value })}`;
}

/** The headers of the page: as the error page (no scripts, not cached, not framed, no referrer). */
export const AUTHORIZED_PAGE_HEADERS = ERROR_PAGE_HEADERS;

const PROVIDER_NAMES: Record<string, string> = { GITHUB: 'GitHub', GITHUB_ENTERPRISE: 'GitHub Enterprise', GITLAB: 'GitLab' };

export function renderAuthorizedPage(input: {
  provider: string;
  account: string;
  organization: string;
  integrationId: string;
  confirmationCode: string;
  continueUrl: string;
  apiUrl: string;
}): string {
  const e = escapeHtml;
  const provider = PROVIDER_NAMES[input.provider] ?? input.provider;
  const minutes = CONFIRMATION_TTL_MS / 60_000;
  const body = JSON.stringify({ data: { externalAccountName: input.account, confirmationCode: input.confirmationCode } });
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>Confirm the connection</title></head>
<body>
<h1>Confirm the connection</h1>
<p>The ${e(provider)} account <strong>${e(input.account)}</strong> authorized the Delivery Platform for the organization <strong>${e(input.organization)}</strong>.</p>
<p>It is <strong>not connected yet</strong>: the member who started this connection must confirm it within ${minutes} minutes with this code.</p>
<p>Confirmation code: <code>${e(input.confirmationCode)}</code></p>
<h2>If you started this connection</h2>
<p>Check that <strong>${e(input.account)}</strong> is the account you meant to connect, then <a href="${e(input.continueUrl)}">continue to the page you started from</a> (the code goes with the link) or confirm it with your own credentials:</p>
<pre>POST ${e(`${input.apiUrl}/integrations/${input.integrationId}/confirm`)}
${e(body)}</pre>
<h2>If someone else sent you the link</h2>
<p>Do not give them this code or this page's address. Without the code nothing is connected, and the authorization lapses after ${minutes} minutes. With it, the organization <strong>${e(input.organization)}</strong> could act on ${e(provider)} as <strong>${e(input.account)}</strong>. You can also revoke the authorization in your ${e(provider)} settings (Applications).</p>
</body>
</html>
`;
}
