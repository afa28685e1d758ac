import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM for provider credentials at rest. A sealed value is
 * `version (1) | key id length (1) | key id | iv (12) | tag (16) | ciphertext`: the key id travels
 * with each ciphertext, so keys rotate by putting a new key first in CREDENTIALS_KEYS (it encrypts
 * from then on) and keeping the old ones after it until every row has been re-sealed.
 */
const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface CredentialKeys {
  current: string;
  keys: Record<string, Buffer>;
}

export class CredentialCipher {
  constructor(private readonly keyring: CredentialKeys) {
    for (const [id, key] of Object.entries(keyring.keys)) if (key.length !== 32) throw new Error(`credential key ${id} is not 32 bytes`);
    if (!keyring.keys[keyring.current]) throw new Error('the current credential key is missing');
  }

  seal(plaintext: string, associated: string): Buffer {
    const id = Buffer.from(this.keyring.current, 'utf8');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keyring.keys[this.keyring.current], iv);
    cipher.setAAD(Buffer.from(associated, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION, id.length]), id, iv, cipher.getAuthTag(), body]);
  }

  /** Decrypts a sealed value; `associated` (the row's id) must be the one it was sealed with. */
  open(sealed: Uint8Array, associated: string): string {
    const buf = Buffer.from(sealed);
    if (buf[0] !== VERSION) throw new Error('unknown credential format');
    const idLength = buf[1];
    const id = buf.subarray(2, 2 + idLength).toString('utf8');
    const key = this.keyring.keys[id];
    if (!key) throw new Error(`credential key ${id} is not configured`);
    let at = 2 + idLength;
    const iv = buf.subarray(at, (at += IV_BYTES));
    const tag = buf.subarray(at, (at += TAG_BYTES));
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(Buffer.from(associated, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(buf.subarray(at)), decipher.final()]).toString('utf8');
  }

  /** The key id a sealed value was encrypted with (to find rows to re-seal after a rotation). */
  static keyIdOf(sealed: Uint8Array): string {
    return Buffer.from(sealed.subarray(2, 2 + sealed[1])).toString('utf8');
  }
}
