/**
 * API key tokens: `dpa_` + 43 base62 characters of 32 random bytes + 6 base62 characters of the
 * CRC-32 of that random part. The checksum lets the guard reject typos and garbage without a
 * lookup, and the prefix lets secret scanners recognise a leaked token.
 */
import { crc32 as zlibCrc32 } from 'node:zlib';

export const API_KEY_TOKEN_PREFIX = 'dpa_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6; // ceil(32 / log2(62))
const TOKEN_PATTERN = new RegExp(`^${API_KEY_TOKEN_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}$`);
/** Anything shaped like one of our tokens, anywhere in a text (for redaction): prefix + body + checksum. */
export const API_KEY_TOKEN_SHAPE = new RegExp(`${API_KEY_TOKEN_PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECKSUM_LENGTH}}`, 'g');

/** CRC-32 (IEEE) of the text's UTF-8 bytes, from node:zlib. */
export function crc32(text: string): number {
  return zlibCrc32(text);
}

function toBase62(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

/** Builds a token from 32 random bytes (the caller supplies them, so this stays pure). */
export function encodeApiKeyToken(randomBytes: Uint8Array): string {
  if (randomBytes.length !== 32) throw new Error('an API key token needs exactly 32 random bytes');
  let value = 0n;
  for (const byte of randomBytes) value = (value << 8n) | BigInt(byte);
  const body = toBase62(value, BODY_LENGTH);
  return `${API_KEY_TOKEN_PREFIX}${body}${toBase62(BigInt(crc32(body)), CHECKSUM_LENGTH)}`;
}

/** True when the token has the right prefix, length, alphabet and checksum. */
export function isWellFormedApiKeyToken(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const body = token.slice(API_KEY_TOKEN_PREFIX.length, API_KEY_TOKEN_PREFIX.length + BODY_LENGTH);
  const checksum = token.slice(API_KEY_TOKEN_PREFIX.length + BODY_LENGTH);
  return toBase62(BigInt(crc32(body)), CHECKSUM_LENGTH) === checksum;
}

/** The last characters shown to users so they can tell keys apart. */
export function apiKeyTokenSuffix(token: string): string {
  return token.slice(-4);
}
