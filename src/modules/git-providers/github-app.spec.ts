import { generateKeyPairSync, verify } from 'node:crypto';
import { ProviderFailure } from './git-provider.port';
import { GitHubAppInstallations } from './github-app';

describe(GitHubAppInstallations.name, () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const app = new GitHubAppInstallations(
    { apiUrl: 'http://127.0.0.1:9', webUrl: 'http://127.0.0.1:9', fetch: () => Promise.reject(new Error('no network in a unit test')) },
    { appId: '4242', privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() },
  );
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;

  it('signs an RS256 JWT whose issuer is the app id, valid for at most ten minutes from about now', async () => {
    const jwt = await app.appJwt();
    const [header, payload, signature] = jwt.split('.');
    expect(decode(header)).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    const claims = decode(payload) as { iss: unknown; iat: number; exp: number };
    expect(String(claims.iss)).toBe('4242');
    const now = Math.floor(Date.now() / 1000);
    // auth-app backdates iat by 30 s against clock drift, as GitHub recommends.
    expect(claims.iat).toBeLessThanOrEqual(now);
    expect(claims.iat).toBeGreaterThan(now - 120);
    expect(claims.exp).toBeGreaterThan(now);
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(660);
    expect(verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
    expect(verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), other.publicKey, Buffer.from(signature, 'base64url'))).toBe(false);
  });

  it('an installation token it cannot fetch is a provider failure, not a token', async () => {
    await expect(app.installationToken('77')).rejects.toBeInstanceOf(ProviderFailure);
  });
});
