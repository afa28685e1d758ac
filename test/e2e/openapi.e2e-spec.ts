import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { errorCatalogue } from '@/common/errors/error-catalogue';
import { createTestApp } from '../support/app';
import { listRoutes } from '../support/routes';

describe('OpenAPI document and Swagger UI', () => {
  let app: NestExpressApplication;

  beforeAll(async () => {
    app = await createTestApp();
  });

  afterAll(async () => {
    await app.close();
  });

  it('documents every route the application serves', async () => {
    const document = (await request(app.getHttpServer()).get('/docs-json').expect(200)).body;
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, unknown>>(document.paths)) for (const method of Object.keys(item)) documented.add(`${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
    const served = listRoutes(app).map((r) => `${r.method} ${r.path}`);
    expect(served.length).toBeGreaterThan(10);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
  });

  it('declares bearer auth on protected routes and none on public ones', async () => {
    const document = (await request(app.getHttpServer()).get('/docs-json').expect(200)).body;
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.paths['/health/live'].get.security).toEqual([]);
    expect(document.security ?? document.paths['/projects'].get.security).toEqual([{ bearer: [] }]);
  });

  it('lists the error catalogue and the error body schema', async () => {
    const document = (await request(app.getHttpServer()).get('/docs-json').expect(200)).body;
    expect(document['x-error-catalogue'].map((e: { code: string }) => e.code)).toEqual(errorCatalogue().map((e) => e.code));
    expect(Object.keys(document.components.schemas.ErrorBodyDto.properties).sort()).toEqual(['action', 'code', 'description', 'details', 'isInternal', 'metadata', 'message', 'requestId'].sort());
  });

  it('uses the spec field names for the list resources', async () => {
    const schemas = (await request(app.getHttpServer()).get('/docs-json').expect(200)).body.components.schemas;
    expect(Object.keys(schemas.ProjectDto.properties).sort()).toEqual(['createdAt', 'description', 'error', 'givenId', 'id', 'name', 'organizationId', 'status', 'updatedAt'].sort());
    expect(Object.keys(schemas.ServiceAccountDto.properties).sort()).toEqual(['createdAt', 'createdById', 'createdByName', 'description', 'id', 'name', 'organizationId', 'role', 'updatedAt'].sort());
    expect(Object.keys(schemas.ExecutionEnvironmentDto.properties).sort()).toEqual(
      ['cloudAccountId', 'createdAt', 'givenId', 'id', 'name', 'organizationId', 'region', 'securityGroupId', 'subnetId', 'type', 'updatedAt', 'vpcId'].sort(),
    );
    expect(schemas.PageMetaDto.required.sort()).toEqual(['limit', 'totalCount']);
  });

  it('serves Swagger UI at /docs without a token', async () => {
    const response = await request(app.getHttpServer()).get('/docs/').expect(200);
    expect(response.text).toContain('swagger-ui');
  });
});
