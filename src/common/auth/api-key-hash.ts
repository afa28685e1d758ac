import { createHash } from 'node:crypto';

/** The only form in which a token is stored: SHA-256, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
