import { randomBytes } from 'node:crypto';
import { API_KEY_TOKEN_PREFIX, apiKeyTokenSuffix, crc32, encodeApiKeyToken, isWellFormedApiKeyToken } from './api-key-token';

describe('API key tokens', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('')).toBe(0);
  });

  it('encodes 32 random bytes as prefix + 43 base62 characters + 6 checksum characters', () => {
    const token = encodeApiKeyToken(randomBytes(32));
    expect(token.startsWith(API_KEY_TOKEN_PREFIX)).toBe(true);
    expect(token).toMatch(/^dpa_[0-9A-Za-z]{49}$/);
    expect(isWellFormedApiKeyToken(token)).toBe(true);
    expect(apiKeyTokenSuffix(token)).toBe(token.slice(-4));
  });

  it('is deterministic for the same bytes and different for different bytes', () => {
    const bytes = new Uint8Array(32).map((_, i) => i);
    expect(encodeApiKeyToken(bytes)).toBe(encodeApiKeyToken(bytes));
    expect(encodeApiKeyToken(bytes)).not.toBe(encodeApiKeyToken(new Uint8Array(32)));
  });

  it('keeps leading zero bytes (fixed width)', () => {
    expect(encodeApiKeyToken(new Uint8Array(32))).toMatch(/^dpa_0{43}[0-9A-Za-z]{6}$/);
  });

  it('rejects any single-character change, wrong prefixes and lengths', () => {
    const token = encodeApiKeyToken(randomBytes(32));
    for (let i = API_KEY_TOKEN_PREFIX.length; i < token.length; i++) {
      const swapped = token[i] === 'a' ? 'b' : 'a';
      expect(isWellFormedApiKeyToken(token.slice(0, i) + swapped + token.slice(i + 1))).toBe(false);
    }
    expect(isWellFormedApiKeyToken(`ghp_${token.slice(4)}`)).toBe(false);
    expect(isWellFormedApiKeyToken(token.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKeyToken(`${token}0`)).toBe(false);
    expect(isWellFormedApiKeyToken('')).toBe(false);
  });

  it('refuses other amounts of randomness', () => {
    expect(() => encodeApiKeyToken(new Uint8Array(16))).toThrow(/32 random bytes/);
  });
});
