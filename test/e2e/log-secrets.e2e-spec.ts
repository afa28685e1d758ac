import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { encodeApiKeyToken } from '@/common/auth/api-key-token';
import { redactTokens, redactUrl } from '@/common/logging/redaction';
import { buildIfStale } from '@tools/workspace/build';
import { eventually } from '../support/eventually';
import { freePort, ROOT } from '../support/processes';

/** Every character percent-encoded: the token is not in the raw URL, only in the decoded one. */
function encodeEveryCharacter(text: string): string {
  return [...text].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
}

const base62 = (n: number) => Array.from(randomBytes(n), (b) => '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'[b % 62]).join('');
/** The shapes GitHub and GitLab give their tokens (secret scanners know them by these prefixes). */
const PROVIDER_TOKENS: Array<[string, string]> = [
  ['GitHub personal (ghp_)', `ghp_${base62(36)}`],
  ['GitHub OAuth (gho_)', `gho_${base62(36)}`],
  ['GitHub user-to-server (ghu_)', `ghu_${base62(36)}`],
  ['GitHub server-to-server (ghs_)', `ghs_${base62(36)}`],
  ['GitHub refresh (ghr_)', `ghr_${base62(76)}`],
  ['GitHub fine-grained (github_pat_)', `github_pat_${base62(22)}_${base62(59)}`],
  ['GitLab personal (glpat-)', `glpat-${base62(20)}`],
];

describe(redactUrl.name, () => {
  const token = encodeApiKeyToken(randomBytes(32));

  it.each([
    ['access_token', `/projects?access_token=${token}`, '/projects?access_token=[redacted]'],
    ['api_key', `/projects?api_key=${token}&limit=5`, '/projects?api_key=[redacted]&limit=5'],
    ['authorization', `/projects?authorization=Bearer%20${token}`, '/projects?authorization=[redacted]'],
    ['a path segment', `/projects/${token}/pipelines`, '/projects/[redacted]/pipelines'],
    ['inside any parameter', `/projects?q=x${token}y`, '/projects?q=x[redacted]y'],
    ['percent-encoded', `/projects?filter=${encodeEveryCharacter(token)}`, '/projects?filter=[redacted]'],
    ['OAuth code and state', '/oauth/callback?code=abc&state=def', '/oauth/callback?code=[redacted]&state=[redacted]'],
    ['nothing secret', '/projects?limit=5&cursor=abc%2F', '/projects?limit=5&cursor=abc%2F'],
    [
      'a merge queue view-link token (the queue page)',
      `/view/merge-queues/q/dpqv_${randomBytes(16).toString('hex')}_1795000000_${randomBytes(32).toString('base64url')}?pr=5`,
      '/view/merge-queues/q/[redacted]?pr=5',
    ],
    ...PROVIDER_TOKENS.map(
      ([what, providerToken]) =>
        [
          `a ${what} token`,
          `/projects/${providerToken}?q=${providerToken}&f=${encodeEveryCharacter(providerToken)}`,
          '/projects/[redacted]?q=[redacted]&f=[redacted]',
        ] as [string, string, string],
    ),
  ])('redacts %s', (_what, url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it.each(PROVIDER_TOKENS)('redacts a %s token from any text (%s)', (_what, providerToken) => {
    expect(redactTokens(`provider said: bad credentials ${providerToken}, "token":"${providerToken}"`)).toBe(
      'provider said: bad credentials [redacted], "token":"[redacted]"',
    );
  });
});

describe('The logs of a request suite', () => {
  beforeAll(() => {
    buildIfStale();
  }, 180_000);

  it('name none of the tokens it used, wherever they were sent', async () => {
    const cli = spawnSync(process.execPath, ['dist/cli.js', 'bootstrap', '--org', `log-secrets-${randomUUID()}`, '--json'], {
      cwd: ROOT,
      env: process.env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(cli.status).toBe(0);
    const tenant = JSON.parse(cli.stdout) as { token: string; memberId: string };
    const port = await freePort();
    const api = spawn(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), LOG_LEVEL: 'trace' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    api.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    api.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    const used = new Set<string>([tenant.token]);
    const unknown = encodeApiKeyToken(randomBytes(32));
    const badChecksum = `${unknown.slice(0, -3)}zzz`;
    used.add(unknown).add(badChecksum);
    const auth = { Authorization: `Bearer ${tenant.token}` };
    const expected: Array<[string, number]> = [];
    const send = async (id: string, path: string, init: RequestInit = {}, status?: number, accessLogged = true) => {
      const response = await fetch(`${base}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), 'X-Request-Id': `secrets-${id}` } });
      if (status !== undefined) expect([id, response.status]).toEqual([id, status]);
      if (accessLogged) expected.push([`secrets-${id}`, response.status]);
      return response;
    };
    try {
      await eventually('api listening', async () => output.includes('api listening'), { timeoutMs: 20_000, everyMs: 200 });

      const created = await send(
        'create',
        '/api-keys',
        {
          method: 'POST',
          headers: { ...auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ data: { name: 'second', ownerId: tenant.memberId } }),
        },
        201,
      );
      expect(created.headers.get('cache-control')).toBe('no-store');
      const second = ((await created.json()) as { data: { token: string } }).data.token;
      used.add(second);

      for (const token of [tenant.token, second, unknown]) {
        const n = [...used].indexOf(token);
        await send(`access_token-${n}`, `/projects?access_token=${token}`, {}, 401);
        await send(`api_key-${n}`, `/projects?api_key=${token}`, {}, 401);
        await send(`authorization-${n}`, `/projects?authorization=Bearer%20${token}`, {}, 401);
        await send(`other-param-${n}`, `/projects?q=${token}`, {}, 401);
        await send(`encoded-${n}`, `/projects?q=${encodeEveryCharacter(token)}`, {}, 401);
        await send(`path-${n}`, `/projects/${token}`, { headers: auth }, 404);
        await send(`unknown-route-${n}`, `/no-such-route/${token}?access_token=${token}`, { headers: auth }, 404);
        await send(
          `headers-${n}`,
          '/projects',
          { headers: { ...auth, 'X-Api-Key': token, 'X-Debug': token, Cookie: `session=${token}`, Referer: `https://example.com/?t=${token}` } },
          200,
        );
        // The body parser refuses this before the request logger runs, so it has no access-log line.
        await send(
          `body-${n}`,
          '/projects',
          { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: `{"data": {"name": "${token}"` },
          400,
          false,
        );
      }
      for (const [n, [, providerToken]] of PROVIDER_TOKENS.entries()) {
        used.add(providerToken);
        await send(`provider-query-${n}`, `/projects?q=${providerToken}`, {}, 401);
        await send(`provider-path-${n}`, `/projects/${providerToken}`, { headers: auth }, 404);
        await send(`provider-header-${n}`, '/projects', { headers: { Authorization: `Bearer ${providerToken}` } }, 401);
      }
      await send('valid-header', '/projects', { headers: auth }, 200);
      await send('second-header', '/projects', { headers: { Authorization: `Bearer ${second}` } }, 200);
      await send('unknown-header', '/projects', { headers: { Authorization: `Bearer ${unknown}` } }, 401);
      await send('bad-checksum-header', '/projects', { headers: { Authorization: `Bearer ${badChecksum}` } }, 401);
      await send('not-bearer', '/projects', { headers: { Authorization: `Token ${tenant.token}` } }, 401);
    } finally {
      const exited = new Promise((resolve) => api.once('exit', resolve));
      api.kill('SIGTERM');
      await exited;
    }

    const entries = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { req?: { id?: string; url?: string }; res?: { statusCode?: number } });
    const requests = entries.filter((entry) => entry.req?.id?.startsWith('secrets-') && entry.res);
    // Every request of the suite was logged (so the absence below means something).
    expect(requests.map((entry) => [entry.req?.id, entry.res?.statusCode])).toEqual(expected);
    expect(requests.find((entry) => entry.req?.id === 'secrets-access_token-0')?.req?.url).toBe('/projects?access_token=[redacted]');
    expect(requests.find((entry) => entry.req?.id === 'secrets-path-0')?.req?.url).toBe('/projects/[redacted]');

    expect(used.size).toBe(4 + PROVIDER_TOKENS.length);
    for (const token of used) {
      expect(output).not.toContain(token);
      expect(output).not.toContain(token.slice(4, 40));
    }
  }, 120_000);
});
