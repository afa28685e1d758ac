import { feature, int, pattern } from '../variables';

/** The development-only credential key, used when CREDENTIALS_KEYS is unset and NODE_ENV is development or test. Never secret. */
const DEVELOPMENT_CREDENTIAL_KEY = { id: 'dev', key: Buffer.alloc(32, 'delivery-platform-development-key') };

export const credentialsConfig = feature(
  'Credentials and API keys',
  {
    CREDENTIALS_KEYS: pattern(
      /^[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=(\s*,\s*[A-Za-z0-9_-]{1,32}:[A-Za-z0-9+/]{43}=)*$/,
      'must be comma-separated id:base64 pairs of 32-byte keys',
      {
        shown: '(required in production)',
        doc: 'keys for provider tokens at rest (AES-256-GCM): `id:base64-of-32-bytes`, comma-separated. The first encrypts; every one decrypts (each ciphertext carries its key id). Rotate by putting a new key first and keeping the old ones until rows are re-sealed. Missing in production: the process stops with `Invalid configuration: CREDENTIALS_KEYS is not set …` (exit 78). Only with `NODE_ENV=development` or `test` may it be unset: a fixed, public development key',
        comment: [
          'id:base64-of-32-bytes, comma-separated (the first encrypts). Make one with:',
          `  node -e "console.log('k1:' + require('crypto').randomBytes(32).toString('base64'))"`,
          'Unset in development/test only: a fixed, public development key.',
        ].join('\n'),
      },
    ),
    AUTH_CACHE_TTL_MS: int({
      min: 0,
      max: 3_600_000,
      default: 30_000,
      doc: 'how long a process trusts a verified API key before reading it again (0 = never cache); revocations reach every process at once through Redis regardless',
    }),
  },
  (v) => ({ authCacheTtlMs: v.AUTH_CACHE_TTL_MS, credentialKeys: credentialKeys(v.CREDENTIALS_KEYS) }),
);

/** Keys for provider credentials at rest: `current` encrypts, all decrypt. */
function credentialKeys(value: string | undefined): { current: string; keys: Record<string, Buffer> } {
  if (!value) return { current: DEVELOPMENT_CREDENTIAL_KEY.id, keys: { [DEVELOPMENT_CREDENTIAL_KEY.id]: DEVELOPMENT_CREDENTIAL_KEY.key } };
  const pairs = value.split(',').map((pair) => pair.trim().split(':') as [string, string]);
  return { current: pairs[0][0], keys: Object.fromEntries(pairs.map(([id, key]) => [id, Buffer.from(key, 'base64')])) };
}
