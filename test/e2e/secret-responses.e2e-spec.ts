import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createTenant, type TestTenant } from '../support/factories';
import { PrismaService } from '@/common/prisma/prisma.service';
import { createGitTestApp, GitProviderEmulator } from '../support/git';
import { createBareRepo, createLocalCodeSource } from '../support/git-repos';

type Schema = { $ref?: string; properties?: Record<string, Schema>; allOf?: Schema[]; items?: Schema; 'x-secret'?: boolean };
type Document = {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: Schema }> }> }>>;
  components: { schemas: Record<string, Schema> };
};

/**
 * A property that holds a secret a client must not let a cache keep: a token, a secret, a single-use
 * authorization URL, or one marked `x-secret` (a view link's `url`, which holds its token).
 */
const SECRET_PROPERTY = /(token|secret)$|^authorizeUrl$|^x-secret:/i;

/** The property names of a response schema, through `$ref`, `allOf` and the `{data}` envelope. */
function propertyNames(schema: Schema | undefined, doc: Document, seen = new Set<string>()): string[] {
  if (!schema) return [];
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return [];
    seen.add(schema.$ref);
    return propertyNames(doc.components.schemas[schema.$ref.split('/').pop() as string], doc, seen);
  }
  const own = Object.entries(schema.properties ?? {}).flatMap(([name, value]) => [
    value['x-secret'] ? `x-secret:${name}` : name,
    ...propertyNames(value, doc, seen),
  ]);
  return [...own, ...(schema.allOf ?? []).flatMap((s) => propertyNames(s, doc, seen)), ...propertyNames(schema.items, doc, seen)];
}

/** `METHOD /path` of every route whose success response the OpenAPI document says carries a secret. */
function routesCarryingSecrets(doc: Document): string[] {
  const out: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths))
    for (const [method, operation] of Object.entries(operations))
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!status.startsWith('2')) continue;
        const names = Object.values(response.content ?? {}).flatMap((c) => propertyNames(c.schema, doc));
        if (names.some((n) => SECRET_PROPERTY.test(n))) out.push(`${method.toUpperCase()} ${path}`);
      }
  return [...new Set(out)].sort();
}

describe('Responses carrying a secret are never stored by a cache (Cache-Control: no-store)', () => {
  let emulator: GitProviderEmulator;
  let app: NestExpressApplication;
  let tenant: TestTenant;
  let githubToken: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    emulator = await new GitProviderEmulator().start();
    githubToken = emulator.addUser('octocat').token;
    app = await createGitTestApp(emulator, { timeoutMs: 1000 });
    tenant = await createTenant(app, 'no-store');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await emulator?.stop();
  });

  /** A merge queue of the tenant on a LOCAL_GIT repository. */
  const createLocalQueue = async () => {
    const source = await createLocalCodeSource(app.get(PrismaService, { strict: false }), tenant.organizationId, createBareRepo().path);
    const queue = await http()
      .post('/merge-queues')
      .set(tenant.auth)
      .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'] } })
      .expect(201);
    return queue.body.data.id as string;
  };

  const expectNoStore = (response: request.Response, what: string) =>
    expect([what, response.headers['cache-control'], response.headers.pragma]).toEqual([what, 'no-store', 'no-cache']);

  // Each route the OpenAPI document shows returning a secret, called for real.
  const CALLS: Record<string, () => Promise<request.Response>> = {
    'POST /api-keys': () =>
      http()
        .post('/api-keys')
        .set(tenant.auth)
        .send({ data: { name: 'no-store', ownerId: tenant.memberId } })
        .expect(201),
    'POST /api-keys/{id}/rotate': async () => {
      const created = await http()
        .post('/api-keys')
        .set(tenant.auth)
        .send({ data: { name: 'to rotate', ownerId: tenant.memberId } })
        .expect(201);
      return http().post(`/api-keys/${created.body.data.id}/rotate`).set(tenant.auth).expect(201);
    },
    'POST /integrations': () =>
      http()
        .post('/integrations')
        .set(tenant.auth)
        .send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name: `gh ${Date.now()}`, token: githubToken } })
        .expect(201),
    'POST /merge-queues/{id}/view-links': async () => {
      const queue = await createLocalQueue();
      return http().post(`/merge-queues/${queue}/view-links`).set(tenant.auth).send({ data: {} }).expect(201);
    },
    'POST /integrations/{id}/webhook-secret': async () => {
      const created = await http()
        .post('/integrations')
        .set(tenant.auth)
        .send({ data: { provider: 'GITHUB', authMethod: 'API_TOKEN', name: `gh rotate ${Date.now()}`, token: githubToken } })
        .expect(201);
      return http().post(`/integrations/${created.body.data.id}/webhook-secret`).set(tenant.auth).expect(200);
    },
  };

  it('the routes whose responses carry a secret are the ones called below (a new one fails here until it is covered)', async () => {
    const doc = (await http().get('/docs-json').expect(200)).body as Document;
    expect(routesCarryingSecrets(doc)).toEqual(Object.keys(CALLS).sort());
  });

  it.each(Object.keys(CALLS))('%s answers with Cache-Control: no-store and Pragma: no-cache', async (route) => {
    const response = await CALLS[route]();
    const body = JSON.stringify(response.body.data);
    // The response does carry a secret.
    expect(body).toMatch(/"(token|webhookSecret)":"[^"]{20,}"|"url":"[^"]+\/dpqv_[^"]{20,}"/);
    expectNoStore(response, route);
  });

  it('a GITHUB integration created over OAUTH returns its single-use authorize URL with no-store too', async () => {
    const response = await http()
      .post('/integrations')
      .set(tenant.auth)
      .send({ data: { provider: 'GITHUB', authMethod: 'OAUTH', name: `gh oauth ${Date.now()}` } })
      .expect(201);
    expect(response.body.data.authorizeUrl).toEqual(expect.any(String));
    expectNoStore(response, 'POST /integrations (OAUTH)');
  });
});
