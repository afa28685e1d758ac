import { randomBytes } from 'node:crypto';
import { CredentialCipher } from './credential-cipher';

describe(CredentialCipher.name, () => {
  const k1 = randomBytes(32);
  const k2 = randomBytes(32);

  it('seals and opens, with no plaintext in the sealed bytes', () => {
    const cipher = new CredentialCipher({ current: 'k1', keys: { k1 } });
    const sealed = cipher.seal('{"accessToken":"ghp_secret"}', 'row-1');
    expect(sealed.toString('latin1')).not.toContain('ghp_secret');
    expect(CredentialCipher.keyIdOf(sealed)).toBe('k1');
    expect(cipher.open(sealed, 'row-1')).toBe('{"accessToken":"ghp_secret"}');
  });

  it('refuses another row id and tampered bytes', () => {
    const cipher = new CredentialCipher({ current: 'k1', keys: { k1 } });
    const sealed = cipher.seal('secret', 'row-1');
    expect(() => cipher.open(sealed, 'row-2')).toThrow();
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1] ^= 1;
    expect(() => cipher.open(tampered, 'row-1')).toThrow();
  });

  it('rotates: a new current key encrypts, the old one still decrypts', () => {
    const old = new CredentialCipher({ current: 'k1', keys: { k1 } }).seal('secret', 'row');
    const rotated = new CredentialCipher({ current: 'k2', keys: { k2, k1 } });
    expect(rotated.open(old, 'row')).toBe('secret');
    expect(CredentialCipher.keyIdOf(rotated.seal('secret', 'row'))).toBe('k2');
    expect(() => new CredentialCipher({ current: 'k2', keys: { k2 } }).open(old, 'row')).toThrow('credential key k1 is not configured');
  });
});
