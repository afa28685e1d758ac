import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createTestApp } from '../support/app';
import { createTenant, type TestTenant } from '../support/factories';
import { listRoutes } from '../support/routes';

/** One resource of each kind that has an {id} route, created by `owner`. */
async function createResources(app: NestExpressApplication, owner: TestTenant): Promise<Record<string, string>> {
  const http = () => request(app.getHttpServer());
  const project = await http().post('/projects').set(owner.auth).send({ data: { name: 'Secret project' } }).expect(201);
  const environment = await http()
    .post('/execution-environments')
    .set(owner.auth)
    .send({ data: { name: 'Secret env', type: 'CLOUD_VPC', region: 'eu-central-1', vpcId: 'vpc-1', subnetId: 'subnet-1', securityGroupId: 'sg-1', cloudAccountId: '123456789012' } })
    .expect(201);
  const serviceAccount = await http().post('/service-accounts').set(owner.auth).send({ data: { name: 'secret-sa' } }).expect(201);
  const apiKey = await http().post('/api-keys').set(owner.auth).send({ data: { name: 'secret key', ownerId: owner.memberId } }).expect(201);
  const member = await http().post('/members').set(owner.auth).send({ data: { name: 'Secret member', email: 'secret@example.com', role: 'MEMBER' } }).expect(201);
  const moduleDefinition = await http().post('/module-definitions').set(owner.auth).send({ data: { name: 'Secret module' } }).expect(201);
  return {
    '/projects': project.body.data.id,
    '/execution-environments': environment.body.data.id,
    '/service-accounts': serviceAccount.body.data.id,
    '/api-keys': apiKey.body.data.id,
    '/members': member.body.data.id,
    '/module-definitions': moduleDefinition.body.data.id,
  };
}

describe('Tenant isolation', () => {
  let app: NestExpressApplication;
  let owner: TestTenant;
  let intruder: TestTenant;
  let ids: Record<string, string>;

  beforeAll(async () => {
    app = await createTestApp();
    [owner, intruder] = await Promise.all([createTenant(app, 'owner'), createTenant(app, 'intruder')]);
    ids = await createResources(app, owner);
  });

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
      const response = await request(app.getHttpServer())[route.method as 'get'](route.path.replace(':id', id)).set(intruder.auth).send({ data: { name: 'hijacked' } });
      expect({ route: `${route.method} ${route.path}`, status: response.status }).toEqual({ route: `${route.method} ${route.path}`, status: 404 });
      expect(response.body.code).toMatch(/^dpa:[A-Za-z]+:NOT_FOUND$/);
      expect(JSON.stringify(response.body)).not.toContain('Secret');
    }
    // Still there, unchanged, for its owner.
    for (const [collection, id] of Object.entries(ids)) {
      const response = await request(app.getHttpServer()).get(`${collection}/${id}`).set(owner.auth).expect(200);
      expect(response.body.data.name).not.toBe('hijacked');
      expect(response.body.data.revokedAt).toBeUndefined();
    }
  });

  it.each(['/projects', '/execution-environments', '/service-accounts', '/api-keys'])('lists only the caller organization on %s', async (collection) => {
    const mine = await request(app.getHttpServer()).get(collection).set(intruder.auth).expect(200);
    expect(mine.body.data.every((item: { organizationId: string }) => item.organizationId === intruder.organizationId)).toBe(true);
    expect(mine.body.data.map((item: { id: string }) => item.id)).not.toContain(ids[collection]);
  });

  it('will not issue a key for a member of another organization', async () => {
    const response = await request(app.getHttpServer()).post('/api-keys').set(intruder.auth).send({ data: { name: 'x', ownerId: owner.memberId } }).expect(422);
    expect(response.body.code).toBe('dpa:ApiKey:OWNER_NOT_FOUND');
  });
});
