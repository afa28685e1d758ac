import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { errorCatalogue } from '@/common/errors/error-catalogue';

export const BEARER_SCHEME = 'bearer';

/** Builds the OpenAPI document: bearer auth everywhere, the error body, and the error catalogue. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Delivery Platform API')
    .setDescription(
      'JSON-over-HTTP API for merge queues, API keys, projects, pipelines, execution environments, integrations, ' +
        'git servers, service accounts, managed domains, reports and CI usage imports.\n\n' +
        'Requests that create or submit carry `{data: {...}}`; responses are `{data}`, lists `{data, meta}` ' +
        '(query `cursor` and `limit`, default 20, max 100). Every error is the error body; its codes are listed in ' +
        '`x-error-catalogue`.',
    )
    .setVersion('0.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key token (`dpa_…`)' }, BEARER_SCHEME)
    .addSecurityRequirements(BEARER_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorBodyDto] });
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item) as { 'x-public'?: boolean; security?: unknown[] }[]) {
      if (operation && typeof operation === 'object' && operation['x-public']) operation.security = [];
    }
  }
  (document as OpenAPIObject & { 'x-error-catalogue': unknown })['x-error-catalogue'] = errorCatalogue().map(({ code, status, message }) => ({ code, status, message }));
  // Every code is declared by the time the modules are imported, so the enum is complete here.
  const codeSchema = (document.components?.schemas?.ErrorBodyDto as { properties?: Record<string, { enum?: string[] }> } | undefined)?.properties?.code;
  if (codeSchema) codeSchema.enum = errorCatalogue().map((e) => e.code);
  return document;
}

export function setupSwagger(app: INestApplication): OpenAPIObject {
  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
  return document;
}
