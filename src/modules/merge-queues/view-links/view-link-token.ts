/*
 * The token of a merge queue's view link: `dpqv_<link id, 32 hex>_<expiry, unix seconds>_<mac>`,
 * the mac an HMAC-SHA256 (base64url) of the link id, the queue id and the expiry under a key derived
 * with HKDF from a server key. The token is never stored: the row holds the id, queue and expiry, so
 * the token is computed again whenever it is needed, and one that was changed in any part (another
 * id, queue or expiry) does not verify. Pure: node:crypto only, no Nest or I/O.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

const TOKEN = /^dpqv_([0-9a-f]{32})_([1-9][0-9]{0,11})_([A-Za-z0-9_-]{43})$/;
const HKDF_INFO = 'dpa merge-queue view links v1';

/** The signing key derived from one server key (HKDF-SHA256, an info string of its own, no salt). */
export function viewLinkKey(serverKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', serverKey, Buffer.alloc(0), HKDF_INFO, 32));
}

export interface ViewLinkClaims {
  linkId: string;
  queueId: string;
  /** Whole seconds (the token carries seconds). */
  expiresAt: Date;
}

function mac(key: Buffer, { linkId, queueId, expiresAt }: ViewLinkClaims): string {
  return createHmac('sha256', key)
    .update(`${linkId}\n${queueId}\n${Math.floor(expiresAt.getTime() / 1000)}`)
    .digest('base64url');
}

/** The token of a link, signed with the current key. */
export function signViewLink(key: Buffer, claims: ViewLinkClaims): string {
  return `dpqv_${claims.linkId.replace(/-/g, '')}_${Math.floor(claims.expiresAt.getTime() / 1000)}_${mac(key, claims)}`;
}

/**
 * The link id and expiry a token names when its mac verifies, for `queueId`, under one of `keys`
 * (the current key first, older ones while they are rotated out), and it has not expired at `now`;
 * otherwise null. Each failure is the same null: the caller shows the same page for each.
 */
export function verifyViewLink(keys: readonly Buffer[], token: string, queueId: string, now: Date): { linkId: string; expiresAt: Date } | null {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const hex = match[1];
  const linkId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const expiresAt = new Date(Number(match[2]) * 1000);
  const given = Buffer.from(match[3], 'base64url');
  const verified = keys.some((key) => {
    const expected = Buffer.from(mac(key, { linkId, queueId, expiresAt }), 'base64url');
    return expected.length === given.length && timingSafeEqual(expected, given);
  });
  if (!verified || expiresAt.getTime() <= now.getTime()) return null;
  return { linkId, expiresAt };
}
