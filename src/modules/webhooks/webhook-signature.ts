import { createHmac, timingSafeEqual } from 'node:crypto';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/**
 * Whether `header` (GitHub's `X-Hub-Signature-256`, `sha256=<hex>`) is the HMAC SHA-256 of the
 * exact bytes received under `secret`. Anything that is not 64 hex digits after `sha256=` (missing,
 * another algorithm, too short or long, non-hex) is false before any comparison; a well-formed one
 * is compared in constant time. Written here rather than taken from @octokit/webhooks-methods: it
 * is these few lines, and that package works on strings, not the raw bytes we verify.
 */
export function signatureMatches(rawBody: Buffer, header: string | undefined, secret: string): boolean {
  const match = header === undefined ? null : SIGNATURE.exec(header.trim());
  if (!match) return false;
  const given = Buffer.from(match[1], 'hex');
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The header value GitHub would send for `rawBody` (the emulator and tests sign with it). */
export function signBody(rawBody: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}
