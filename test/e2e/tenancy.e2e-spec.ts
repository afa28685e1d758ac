import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createTestApp } from '../support/app';
import {
  createCodeSource,
  createExecutionEnvironment,
  createGitServer,
  createManagedDomain,
  createModuleDefinition,
  createProject,
  createServiceAccount,
  createTenant,
  ENVIRONMENT_SHAPES,
  type TestTenant,
} from '../support/factories';
import { PrismaService } from '@/common/prisma/prisma.service';
import { commit, createBareRepo, createLocalCodeSource } from '../support/git-repos';
import { listRoutes } from '../support/routes';

/** One resource of each kind that has an {id} route, created by `owner`. */
async function createResources(app: NestExpressApplication, owner: TestTenant): Promise<Record<string, string>> {
  const http = () => request(app.getHttpServer());
  const [project, environment, unusedEnvironment, serviceAccount, moduleDefinition, domain, gitServer, codeSource] = await Promise.all([
    createProject(app, owner, { name: 'Secret project' }),
    createExecutionEnvironment(app, owner, { name: 'Secret env' }),
    createExecutionEnvironment(app, owner, { name: 'Secret unused env', ...ENVIRONMENT_SHAPES.GCP }),
    createServiceAccount(app, owner, { name: 'secret-sa' }),
    createModuleDefinition(app, owner, { name: 'Secret module' }),
    createManagedDomain(app, owner),
    createGitServer(app, owner, { provider: 'GITLAB', hostUrl: 'https://secret-git.example.com' }),
    createCodeSource(app, owner, { foreignId: '/srv/secret.git', nameWithOwner: '/srv/secret.git', url: 'file:///srv/secret.git' }),
  ]);
  // The pipeline version over HTTP: it links the environment (what makes that environment's DELETE a 409).
  const pipeline = await http()
    .post('/pipelines')
    .set(owner.auth)
    .send({ data: { projectId: project.id, name: 'Secret pipeline' } })
    .expect(201);
  const version = await http()
    .post(`/pipelines/${pipeline.body.data.id}/versions`)
    .set(owner.auth)
    .send({ data: { steps: [{ name: 'secret-step', executionEnvironmentId: environment.id, cpu: 1, memoryGiB: 1, diskGiB: 1 }] } })
    .expect(201);
  const run = await http()
    .post(`/pipelines/${pipeline.body.data.id}/runs`)
    .set(owner.auth)
    .send({ data: { pipelineVersionId: version.body.data.id } })
    .expect(201);
  const apiKey = await http()
    .post('/api-keys')
    .set(owner.auth)
    .send({ data: { name: 'secret key', ownerId: owner.memberId } })
    .expect(201);
  const member = await http()
    .post('/members')
    .set(owner.auth)
    .send({ data: { email: `secret-${Date.now()}@example.com`, name: 'Secret member', role: 'VIEWER' } })
    .expect(201);
  const integration = await http()
    .post('/integrations')
    .set(owner.auth)
    .send({ data: { provider: 'GITHUB', authMethod: 'OAUTH', name: 'Secret integration' } })
    .expect(201);
  const repo = createBareRepo();
  const source = await createLocalCodeSource(app.get(PrismaService, { strict: false }), owner.organizationId, repo.path);
  const mergeQueue = await http()
    .post('/merge-queues')
    .set(owner.auth)
    .send({ data: { codeSourceId: source.id, baseRef: 'main', requiredChecks: ['ci'] } })
    .expect(201);
  return {
    '/merge-queues': mergeQueue.body.data.id,
    '/merge-queues/head': commit(repo.path, repo.main, { 'x.txt': 'x' }, 'hijack'),
    '/projects': project.id,
    '/execution-environments': environment.id,
    '/service-accounts': serviceAccount.id,
    '/api-keys': apiKey.body.data.id,
    '/members': member.body.data.id,
    '/pipelines': pipeline.body.data.id,
    '/pipeline-versions': version.body.data.id,
    '/pipeline-runs': run.body.data.id,
    // The environment DELETE would 409 for its owner (a version uses it); the intruder must see a 404 either way.
    '/execution-environments/unused': unusedEnvironment.id,
    '/module-definitions': moduleDefinition.id,
    '/domains': domain.id,
    '/integrations': integration.body.data.id,
    '/git/self-hosted': gitServer.id,
    '/code-sources': codeSource.id,
    // GET /code-source/{id}/repository (singular, as the spec writes it).
    '/code-source': codeSource.id,
  };
}

/** A valid body for routes whose payload is not a name, so that only tenancy can refuse the call. */
function bodyFor(method: string, path: string, ids: Record<string, string>): object {
  if (method === 'post' && path.endsWith('/versions'))
    return { data: { steps: [{ name: 'hijack', executionEnvironmentId: ids['/execution-environments'], cpu: 1, memoryGiB: 1, diskGiB: 1 }] } };
  if (method === 'post' && path.endsWith('/runs')) return { data: { pipelineVersionId: ids['/pipeline-versions'] } };
  if (method === 'patch' && path.startsWith('/pipeline-runs')) return { data: { status: 'CANCELED' } };
  if (method === 'post' && path.endsWith('/grants')) return { data: { organizationId: ids['/intruder-organization'] } };
  if (method === 'post' && path.endsWith('/dependents')) return { data: { hostname: 'hijack.example.com', kind: 'OTHER', resourceId: 'hijack' } };
  if (method === 'post' && path.endsWith('/entries')) return { data: { number: 1, headSha: ids['/merge-queues/head'], url: 'https://example.test/pr/1' } };
  if (method === 'patch' && path.includes('/entries/')) return { data: { priority: 5 } };
  if (method === 'patch' && path === '/merge-queues/:id') return { data: { maxParallel: 2 } };
  if (method === 'post' && path.endsWith('/confirm')) return { data: { externalAccountName: 'hijack', confirmationCode: 'AAAA-BBBB' } };
  if (method === 'patch' && path === '/merge-queues/:id/settings') return { data: { skippedPasses: true } };
  if (method === 'post' && path.endsWith('/view-links')) return { data: {} };
  if (method === 'post' && path.endsWith('/checks')) return { data: { name: 'ci', state: 'success', sha: ids['/merge-queues/head'] } };
  return { data: { name: 'hijacked' } };
}

/** The query a route needs besides its body (a JUnit report names its check and commit there). */
function queryFor(path: string, ids: Record<string, string>): string {
  return path.endsWith('/checks/junit') ? `?name=ci&sha=${ids['/merge-queues/head']}` : '';
}

describe('Tenant isolation', () => {
  let app: NestExpressApplication;
  let owner: TestTenant;
  let intruder: TestTenant;
  let ids: Record<string, string>;

  beforeAll(async () => {
    app = await createTestApp();
    [owner, intruder] = await Promise.all([createTenant(app, 'owner'), createTenant(app, 'intruder')]);
    ids = { ...(await createResources(app, owner)), '/intruder-organization': intruder.organizationId };
  });

  const resourceIds = () => Object.entries(ids).filter(([key]) => !key.startsWith('/intruder') && key !== '/merge-queues/head');

  afterAll(async () => {
    await app.close();
  });

  it('answers 404 on every {id} route for a resource of another organization, and changes nothing', async () => {
    const idRoutes = listRoutes(app).filter((r) => !r.isPublic && r.path.includes(':id'));
    expect(idRoutes.length).toBeGreaterThanOrEqual(6);
    for (const route of idRoutes) {
      const collection = route.path.replace(/\/:id.*$/, '');
      const id = ids[collection];
      expect({ route: route.path, hasFixture: id !== undefined }).toEqual({ route: route.path, hasFixture: true });
      const response = await request(app.getHttpServer())
        [route.method as 'get'](route.path.replace(':id', id) + queryFor(route.path, ids))
        .set(intruder.auth)
        .send(bodyFor(route.method, route.path, ids));
      expect({ route: `${route.method} ${route.path}`, status: response.status }).toEqual({ route: `${route.method} ${route.path}`, status: 404 });
      expect(response.body.code).toMatch(/^dpa:[A-Za-z]+:NOT_FOUND$/);
      expect(JSON.stringify(response.body)).not.toContain('Secret');
    }
    // Still there, unchanged, for its owner.
    for (const [key, id] of resourceIds()) {
      if (key === '/code-source') continue;
      const collection = key.replace('/unused', '');
      const response = await request(app.getHttpServer()).get(`${collection}/${id}`).set(owner.auth).expect(200);
      expect(response.body.data.name).not.toBe('hijacked');
      expect(response.body.data.revokedAt).toBeUndefined();
      expect(response.body.data.status).not.toBe('CANCELED');
    }
  });

  it.each([
    '/projects',
    '/execution-environments',
    '/service-accounts',
    '/api-keys',
    '/members',
    '/audit-events',
    '/pipelines',
    '/domains',
    '/integrations',
    '/git/self-hosted',
    '/code-sources',
    '/merge-queues',
  ])('lists only the caller organization on %s', async (collection) => {
    const mine = await request(app.getHttpServer()).get(collection).set(intruder.auth).expect(200);
    expect(mine.body.data.every((item: { organizationId: string }) => item.organizationId === intruder.organizationId)).toBe(true);
    expect(mine.body.data.map((item: { id: string }) => item.id)).not.toContain(ids[collection]);
  });

  it('will not issue a key for a member of another organization', async () => {
    const response = await request(app.getHttpServer())
      .post('/api-keys')
      .set(intruder.auth)
      .send({ data: { name: 'x', ownerId: owner.memberId } })
      .expect(422);
    expect(response.body.code).toBe('dpa:ApiKey:OWNER_NOT_FOUND');
  });
});
