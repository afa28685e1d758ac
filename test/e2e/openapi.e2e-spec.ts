import { Controller, Delete, Get, HttpCode } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { ApiNoContentResponse, ApiNotFoundResponse, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { Public } from '@/common/auth/auth.decorators';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { AppError } from '@/common/errors/app-error';
import { AuthErrors, PaginationErrors, RequestErrors, ServerErrors } from '@/common/errors/common.errors';
import { errorCatalogue } from '@/common/errors/error-catalogue';
import { ApiDataResponse } from '@/common/http/envelope';
import { buildOpenApiDocument } from '@/common/swagger/swagger';
import { ApiKeyErrors } from '@/modules/api-keys/api-keys.errors';
import { Permission } from '@/common/auth/permissions';
import { MergeQueueErrors } from '@/modules/merge-queues/merge-queues.errors';
import { GitProviderErrors } from '@/modules/git-providers/git-providers.errors';
import { CodeSourceErrors } from '@/modules/code-sources/code-sources.errors';
import { ExecutionEnvironmentErrors } from '@/modules/execution-environments/execution-environments.errors';
import { ProjectErrors } from '@/modules/projects/projects.errors';
import { ServiceAccountErrors } from '@/modules/service-accounts/service-accounts.errors';
import { createTestApp } from '../support/app';
import { takeResponseViolations } from '../support/openapi-validator';
import { listRoutes } from '../support/routes';

type Operation = { operationId: string; tags?: string[]; security?: unknown[]; requestBody?: unknown; responses: Record<string, Response> };
type Response = {
  description: string;
  headers?: Record<string, unknown>;
  content?: { 'application/json': { schema: { allOf?: [unknown, { properties: { code: { enum: string[] } } }] } } };
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, Record<string, unknown>> };
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  security?: unknown[];
} & Record<string, unknown>;
type Schema = { properties?: Record<string, Schema>; additionalProperties?: unknown; items?: Schema; required?: string[] };

const operations = (document: Document): [string, Operation][] =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => [`${method} ${path}`, operation] as [string, Operation]),
  );

/** The codes a response's schema allows, in the order the document lists them. */
const codesOf = (response: Response | undefined): string[] | undefined => response?.content?.['application/json'].schema.allOf?.[1].properties.code.enum;

describe('OpenAPI document and Swagger UI', () => {
  let app: NestExpressApplication;
  let document: Document;

  beforeAll(async () => {
    app = await createTestApp();
    document = (await request(app.getHttpServer()).get('/docs-json').expect(200)).body;
  });

  afterAll(async () => {
    await app.close();
  });

  it('documents every route the application serves', async () => {
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, unknown>>(document.paths))
      for (const method of Object.keys(item)) documented.add(`${method} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
    const served = listRoutes(app).map((r) => `${r.method} ${r.path}`);
    expect(served.length).toBeGreaterThan(10);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
  });

  it('declares bearer auth on protected routes and none on public ones; tokens are opaque API keys, not JWTs', async () => {
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes.bearer.bearerFormat).not.toMatch(/jwt/i);
    expect(document.paths['/health/live'].get.security).toEqual([]);
    expect(document.security ?? document.paths['/projects'].get.security).toEqual([{ bearer: [] }]);
  });

  it('lists the error catalogue and the error body schema', async () => {
    expect((document['x-error-catalogue'] as { code: string }[]).map((e) => e.code)).toEqual(errorCatalogue().map((e) => e.code));
    expect(Object.keys(document.components.schemas.ErrorBodyDto.properties ?? {}).sort()).toEqual(
      ['action', 'code', 'description', 'details', 'isInternal', 'metadata', 'message', 'requestId'].sort(),
    );
  });

  it('uses the spec field names for the list resources', async () => {
    const schemas = document.components.schemas;
    expect(Object.keys(schemas.ProjectDto.properties ?? {}).sort()).toEqual(
      ['createdAt', 'description', 'error', 'givenId', 'id', 'name', 'organizationId', 'status', 'updatedAt'].sort(),
    );
    expect(Object.keys(schemas.ServiceAccountDto.properties ?? {}).sort()).toEqual(
      ['createdAt', 'createdById', 'createdByName', 'description', 'id', 'name', 'organizationId', 'role', 'updatedAt'].sort(),
    );
    expect(Object.keys(schemas.ExecutionEnvironmentDto.properties ?? {}).sort()).toEqual(
      ['cloudAccountId', 'createdAt', 'givenId', 'id', 'name', 'organizationId', 'region', 'securityGroupId', 'subnetId', 'type', 'updatedAt', 'vpcId'].sort(),
    );
    expect(schemas.PageMetaDto.required?.sort()).toEqual(['limit', 'totalCount']);
  });

  it("keeps the spec's closed merge-queue objects to the spec's fields (anything more lives in the queue's own resources)", () => {
    // delivery-platform-api.md, "MergeQueue": unknown extra properties are not allowed on these.
    const spec: Record<string, string[]> = {
      MergeQueueDto: ['id', 'organizationId', 'repositoryId', 'repository', 'baseRef', 'revision', 'status', 'batchDepth', 'updatedAt', 'entries', 'batches'],
      MergeQueueBatchDto: ['id', 'position', 'prNumbers', 'status', 'requiredChecks', 'checksUrl', 'headSha', 'operation'],
      MergeQueueEntryDto: ['id', 'number', 'headSha', 'url', 'status', 'position', 'priority', 'setAside', 'batchId', 'block', 'title'],
      MergeQueueOperationDto: ['kind', 'outcome'],
      MergeQueueCheckDto: ['name', 'state'],
    };
    const schemas = document.components.schemas;
    for (const [name, fields] of Object.entries(spec)) {
      expect({ name, fields: Object.keys(schemas[name]?.properties ?? {}).sort() }).toEqual({ name, fields: [...fields].sort() });
      // Closed: the response validation of every e2e test refuses a property the document does not list.
      expect({ name, additionalProperties: schemas[name]?.additionalProperties }).toEqual({ name, additionalProperties: false });
    }
  });

  it('declares a server, and every tag it uses with a description', () => {
    expect(document.servers?.length).toBeGreaterThan(0);
    const used = new Set(operations(document).flatMap(([, operation]) => operation.tags ?? []));
    expect(used.size).toBeGreaterThanOrEqual(5);
    expect((document.tags ?? []).map((t) => t.name).sort()).toEqual([...used].sort());
    expect((document.tags ?? []).filter((t) => !t.description)).toEqual([]);
  });

  it('closes request and response objects (additionalProperties: false) but keeps free-form members free', () => {
    const schemas = document.components.schemas;
    const open = Object.entries(schemas)
      .filter(([, schema]) => schema.properties && schema.additionalProperties !== false)
      .map(([name]) => name);
    expect(open).toEqual([]);
    for (const name of [
      'CreateProjectRequest',
      'CreateProjectDto',
      'UpdateProjectRequest',
      'UpdateProjectDto',
      'CreateApiKeyRequest',
      'CreateApiKeyDto',
      'CreateServiceAccountDto',
      'CreateExecutionEnvironmentDto',
    ]) {
      expect({ name, additionalProperties: schemas[name]?.additionalProperties }).toEqual({ name, additionalProperties: false });
    }
    expect(schemas.ErrorBodyDto.properties?.metadata.additionalProperties).toBe(true);
    expect(schemas.ErrorDetailSectionDto.properties?.object.additionalProperties).toBe(true);
  });

  it('declares on every operation the statuses every route can give, from the route metadata', () => {
    const publicRoutes = new Set(
      listRoutes(app)
        .filter((r) => r.isPublic)
        .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`),
    );
    const auth401 = Object.values(AuthErrors)
      .filter((e) => e.status === 401)
      .map((e) => e.code);
    for (const [name, operation] of operations(document)) {
      const responses = operation.responses;
      expect({ name, 400: codesOf(responses['400']) }).toEqual({
        name,
        400: expect.arrayContaining([RequestErrors.VALIDATION_FAILED.code, RequestErrors.MALFORMED_JSON.code]),
      });
      expect({ name, 413: codesOf(responses['413']), 415: codesOf(responses['415']), 500: codesOf(responses['500']) }).toEqual({
        name,
        413: [RequestErrors.PAYLOAD_TOO_LARGE.code],
        415: [RequestErrors.UNSUPPORTED_MEDIA_TYPE.code],
        500: [ServerErrors.INTERNAL.code],
      });
      expect({ name, 503: codesOf(responses['503']) }).toEqual({ name, 503: expect.arrayContaining([ServerErrors.SERVICE_UNAVAILABLE.code]) });
      expect(responses['503'].headers).toHaveProperty('Retry-After');
      if (publicRoutes.has(name)) {
        // A public route never gives the bearer guard's 401s; one that verifies its caller another
        // way (a webhook's signature) declares its own.
        expect({ name, 401: (codesOf(responses['401']) ?? []).filter((code) => auth401.includes(code)) }).toEqual({ name, 401: [] });
      } else {
        expect({ name, 401: codesOf(responses['401']), 429: codesOf(responses['429']) }).toEqual({
          name,
          401: auth401,
          429: [RequestErrors.RATE_LIMITED.code],
        });
        expect(responses['429'].headers).toHaveProperty('Retry-After');
      }
    }
  });

  it("shows API key scopes as an enum of the permissions, on the request and on the key, and the check report's permission", () => {
    const schemas = document.components.schemas as Record<
      string,
      { properties?: Record<string, { items?: { enum?: string[] }; minItems?: number }>; required?: string[] }
    >;
    const permissions = Object.values(Permission);
    expect(schemas.CreateApiKeyDto.properties?.scopes).toMatchObject({ minItems: 1, items: { enum: permissions } });
    expect(schemas.ApiKeyDto.properties?.scopes).toMatchObject({ items: { enum: permissions } });
    expect(schemas.CreatedApiKeyDto.properties?.scopes ?? schemas.ApiKeyDto.properties?.scopes).toBeDefined();
    expect(schemas.ReportCheckDto.required).toEqual(expect.arrayContaining(['name', 'state', 'sha']));
    const report = (document.paths['/merge-queues/{id}/batches/{batchId}/checks'] as unknown as Record<string, Record<string, unknown>>).post;
    expect(report['x-required-permission']).toBe(Permission.MergeQueuesReportChecks);
  });

  it.each([
    ['post /projects', { 403: [AuthErrors.FORBIDDEN], 409: [ProjectErrors.GIVEN_ID_TAKEN] }],
    ['patch /projects/{id}', { 403: [AuthErrors.FORBIDDEN], 404: [ProjectErrors.NOT_FOUND], 409: [ProjectErrors.GIVEN_ID_TAKEN] }],
    // Every route states a permission, so every protected route can answer 403 (a VIEWER reading is allowed, but the route still declares it).
    ['get /projects/{id}', { 403: [AuthErrors.FORBIDDEN], 404: [ProjectErrors.NOT_FOUND], 409: undefined }],
    ['post /execution-environments', { 403: [AuthErrors.FORBIDDEN], 409: [ExecutionEnvironmentErrors.GIVEN_ID_TAKEN] }],
    ['post /service-accounts', { 403: [AuthErrors.FORBIDDEN], 409: [ServiceAccountErrors.NAME_TAKEN] }],
    [
      'post /api-keys',
      {
        403: [AuthErrors.FORBIDDEN],
        404: undefined,
        422: [
          ApiKeyErrors.OWNER_NOT_FOUND,
          ApiKeyErrors.EXPIRY_IN_PAST,
          ApiKeyErrors.EXPIRY_AFTER_CREATOR,
          ApiKeyErrors.SCOPE_NOT_HELD,
          ApiKeyErrors.SCOPE_BEYOND_CREATOR,
        ],
      },
    ],
    [
      'post /merge-queues/{id}/batches/{batchId}/checks',
      {
        403: [AuthErrors.FORBIDDEN],
        404: [MergeQueueErrors.NOT_FOUND, MergeQueueErrors.BATCH_NOT_FOUND],
        409: [MergeQueueErrors.CHECK_NOT_FOR_CANDIDATE],
        422: [MergeQueueErrors.CHECK_NOT_REQUIRED, MergeQueueErrors.CHECK_SOURCE_BOUND],
      },
    ],
    [
      'patch /merge-queues/{id}/settings',
      {
        403: [AuthErrors.FORBIDDEN],
        // GitHub no longer knowing the repository, when requiredChecksFrom: branchProtection reads it.
        404: [MergeQueueErrors.NOT_FOUND, GitProviderErrors.REPOSITORY_NOT_FOUND],
        409: [MergeQueueErrors.REVISION_MISMATCH],
        422: [
          MergeQueueErrors.INVALID_SETTINGS,
          MergeQueueErrors.CHECKS_FROM_GITHUB,
          MergeQueueErrors.NO_CHECKS_ON_GITHUB,
          CodeSourceErrors.INTEGRATION_NOT_FOUND,
          GitProviderErrors.REQUEST_REJECTED,
          GitProviderErrors.HOST_REFUSED,
          GitProviderErrors.HOST_UNRESOLVED,
        ],
      },
    ],
    [
      'post /merge-queues/{id}/settings/required-checks/refresh',
      {
        403: [AuthErrors.FORBIDDEN],
        404: [MergeQueueErrors.NOT_FOUND, GitProviderErrors.REPOSITORY_NOT_FOUND],
        409: undefined,
        422: [
          MergeQueueErrors.CHECKS_NOT_FROM_GITHUB,
          MergeQueueErrors.NO_CHECKS_ON_GITHUB,
          CodeSourceErrors.INTEGRATION_NOT_FOUND,
          GitProviderErrors.REQUEST_REJECTED,
          GitProviderErrors.HOST_REFUSED,
          GitProviderErrors.HOST_UNRESOLVED,
        ],
      },
    ],
    ['delete /api-keys/{id}', { 403: [AuthErrors.FORBIDDEN], 404: [ApiKeyErrors.NOT_FOUND] }],
    [
      'get /projects',
      { 400: [RequestErrors.VALIDATION_FAILED, RequestErrors.MALFORMED_JSON, RequestErrors.READ_ONLY_FIELD, PaginationErrors.INVALID_CURSOR], 404: undefined },
    ],
  ])('%s declares exactly the codes it can throw', (name, expected) => {
    const [method, path] = name.split(' ');
    const responses = document.paths[path][method].responses;
    for (const [status, entries] of Object.entries(expected)) {
      expect({ name, status, codes: codesOf(responses[status]) }).toEqual({ name, status, codes: entries?.map((e) => e.code) });
    }
  });

  it('serves Swagger UI at /docs without a token', async () => {
    const response = await request(app.getHttpServer()).get('/docs/').expect(200);
    expect(response.text).toContain('swagger-ui');
  });
});

class ProbeDto {
  @ApiProperty() name: string;
  @ApiPropertyOptional({ type: String, nullable: true }) note?: string | null;
}

/** Routes that break their own documentation in the ways the response validator must notice. */
@Public()
@Controller('openapi-probe')
class ProbeController {
  @Get('conforming')
  @ApiDataResponse(ProbeDto)
  conforming() {
    return { data: { name: 'ok', note: null } };
  }

  @Get('leaky')
  @ApiDataResponse(ProbeDto)
  leaky() {
    return { data: { name: 'ok', passwordHash: 'x' } };
  }

  @Get('undeclared-status')
  @ApiDataResponse(ProbeDto)
  undeclaredStatus(): never {
    throw new AppError(ProjectErrors.GIVEN_ID_TAKEN);
  }

  @Get('wrong-code')
  @ApiDataResponse(ProbeDto)
  @ApiErrors(ProjectErrors.NOT_FOUND)
  wrongCode(): never {
    throw new AppError(ApiKeyErrors.NOT_FOUND);
  }

  @Delete('no-content')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Gone' })
  noContent(): void {}
}

describe('The response validator every e2e app runs', () => {
  let app: NestExpressApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp({ controllers: [ProbeController] });
  });

  afterAll(async () => {
    await app.close();
  });

  it('passes responses that match the document, including bodiless 204s and errors of unknown routes', async () => {
    await http().get('/openapi-probe/conforming').expect(200);
    await http().delete('/openapi-probe/no-content').expect(204);
    await http().get('/no-such-route').expect(404);
    expect(takeResponseViolations()).toEqual([]);
  });

  it('reports a field the document does not declare', async () => {
    await http().get('/openapi-probe/leaky').expect(200);
    expect(takeResponseViolations()).toEqual([
      expect.stringMatching(/^GET \/openapi-probe\/leaky -> 200: body\.data must NOT have additional properties \(passwordHash\)/),
    ]);
  });

  it('reports a status the operation does not declare', async () => {
    await http().get('/openapi-probe/undeclared-status').expect(409);
    expect(takeResponseViolations()).toEqual([
      expect.stringMatching(/^GET \/openapi-probe\/undeclared-status -> 409: status not declared \(declared: 200, 400, 413, 415, 429, 500, 503\)/),
    ]);
  });

  it('reports an error code the status does not declare', async () => {
    await http().get('/openapi-probe/wrong-code').expect(404);
    expect(takeResponseViolations()).toEqual([
      expect.stringContaining(`GET /openapi-probe/wrong-code -> 404: body.code must be equal to one of the allowed values (${ProjectErrors.NOT_FOUND.code})`),
    ]);
  });
});

describe('Error responses declared outside @ApiErrors', () => {
  @Controller('drifting')
  class DriftingController {
    @Get()
    @ApiNotFoundResponse({ description: 'Says 404, but no catalogue entry says which codes' })
    get() {
      return {};
    }
  }

  it('stop the document from being built', async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [DriftingController] }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      expect(() => buildOpenApiDocument(app)).toThrow('GET /drifting (DriftingController_get) declares 404 outside @ApiErrors');
    } finally {
      await app.close();
    }
  });
});
