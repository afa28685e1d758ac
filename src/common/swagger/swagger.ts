import type { INestApplication } from '@nestjs/common';
import { MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IS_PUBLIC, REQUIRED_PERMISSION, SUPERADMIN_ONLY, SUPERADMIN_PERMISSION } from '@/common/auth/auth.decorators';
import { rolesHolding, type Permission } from '@/common/auth/permissions';
import { API_ERRORS, errorResponses, routeErrors, type RouteFacts } from '@/common/errors/api-error-responses';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { errorCatalogue, type ErrorEntry } from '@/common/errors/error-catalogue';
import { SKIP_RATE_LIMIT } from '@/common/throttling/rate-limit.decorators';
import { describeRateLimits } from '@/common/throttling/rate-limits';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';

export const BEARER_SCHEME = 'bearer';

/** Every tag a controller uses, with what it groups. A tag missing here is still declared, without a description. */
const TAGS: Record<string, string> = {
  'api-keys': 'API keys: issue (the secret is returned once), list, read, rotate and revoke bearer tokens',
  projects: 'Projects of the organization',
  'execution-environments': 'Execution environments (cloud environments) that run sandboxes',
  'service-accounts': 'Non-human identities; issue them tokens with POST /api-keys',
  health: 'Liveness and readiness probes (public)',
  members: 'People of the organization; they act through API keys issued to them',
  'audit-events': 'The audit trail of security-relevant actions (ADMIN)',
  reports: 'Bug reports and feedback; superadmins read them',
  domains: 'Managed wildcard apexes: registration, DNS (TXT) verification, nesting grants, dependents and the apex status',
  'module-versions': 'Module definitions and their semantic versions, ordered by semver precedence in the database',
  integrations:
    'Connections to git provider accounts (API token, OAuth, app installation) and the OAuth callback; credentials are stored encrypted and never returned',
  'git servers': 'Self-hosted git servers (GitHub Enterprise Server, GitLab), checked against the outgoing request policy',
  'code sources': 'Repositories connected through an integration, or LOCAL_GIT bare repositories, and their provider repository information',
  usage: 'CI usage history of connected repositories: background imports (BullMQ workers, resumable, idempotent) and usage per code source, workflow and day',
  webhooks:
    "Deliveries from git providers (GitHub webhooks): public, verified with the integration's webhook secret (HMAC SHA-256 of the raw body), stored once per delivery id and applied by the worker",
  pipelines: 'Deployment pipelines, their immutable versions, runs, and the sandbox host plan of a version',
  'merge-queues':
    'Merge queues: admit pull requests, report CI on batch candidates, pause/resume/disable/enable, and the event trail of every transition and operation',
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Handler {
  controller: object;
  handler: object;
}

/** The controller method behind each operationId (Nest's default `<Controller>_<method>`). */
function handlersByOperationId(app: INestApplication): Map<string, Handler> {
  const scanner = new MetadataScanner();
  const out = new Map<string, Handler>();
  for (const module of app.get(ModulesContainer, { strict: false }).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (abstract new (...args: never[]) => object) | null;
      if (!controller || typeof controller !== 'function') continue;
      for (const method of scanner.getAllMethodNames(controller.prototype)) {
        out.set(`${controller.name}_${method}`, { controller, handler: (controller.prototype as Record<string, object>)[method] });
      }
    }
  }
  return out;
}

function factsOf(reflector: Reflector, { controller, handler }: Handler, operation: OperationObject): RouteFacts {
  const targets = [handler, controller] as Parameters<Reflector['getAllAndOverride']>[1];
  const query = (operation.parameters ?? []).filter((p): p is ParameterObject => 'in' in p && p.in === 'query');
  return {
    isPublic: reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) === true,
    requiredPermission: reflector.getAllAndOverride<boolean>(SUPERADMIN_ONLY, targets)
      ? SUPERADMIN_PERMISSION
      : reflector.getAllAndOverride<string | undefined>(REQUIRED_PERMISSION, targets),
    skipsRateLimit: reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, targets) === true,
    validatesInput: operation.requestBody !== undefined || query.length > 0,
    paginated: query.some((p) => p.name === 'cursor'),
    declared: reflector.getAllAndMerge<ErrorEntry[]>(API_ERRORS, targets),
  };
}

/**
 * Replaces each operation's error responses by the ones its metadata decides (see `routeErrors`).
 * An error response declared any other way (an `@ApiXxxResponse` on the handler) would drift from
 * what the route really answers, so it is refused here, except the ones the role and rate-limit
 * decorators add: their description and headers are kept.
 */
function declareErrors(app: INestApplication, document: OpenAPIObject): void {
  const handlers = handlersByOperationId(app);
  const reflector = new Reflector();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as PathItemObject)[method];
      if (!operation) continue;
      const where = `${method.toUpperCase()} ${path} (${operation.operationId})`;
      const handler = operation.operationId ? handlers.get(operation.operationId) : undefined;
      if (!handler) throw new Error(`OpenAPI: no controller method found for ${where}`);
      const facts = factsOf(reflector, handler, operation);
      if (facts.isPublic) operation.security = [];
      const existing = operation.responses as Record<string, ResponseObject>;
      const entries = routeErrors(facts);
      const statuses = new Set(entries.map((e) => String(e.status)));
      const lead: Record<number, string> = {};
      if (facts.requiredPermission) {
        const holders =
          facts.requiredPermission === SUPERADMIN_PERMISSION ? 'superadmins only' : `roles ${rolesHolding(facts.requiredPermission as Permission).join(', ')}`;
        lead[403] = `Requires the permission \`${facts.requiredPermission}\` (${holders})`;
        // The requirement in words too, for readers of Swagger UI.
        operation.description = `${operation.description ? `${operation.description}\n\n` : ''}Requires \`${facts.requiredPermission}\` (${holders}).`;
      }
      for (const [status, response] of Object.entries(existing)) {
        if (Number(status) < 400) continue;
        if (!statuses.has(status))
          throw new Error(`OpenAPI: ${where} declares ${status} outside @ApiErrors; declare the catalogue entries it throws with @ApiErrors(...)`);
        if (response.description) lead[Number(status)] ??= response.description;
      }
      const computed = errorResponses(entries, lead);
      for (const [status, response] of Object.entries(existing)) {
        if (Number(status) >= 400 && response.headers) computed[status].headers = { ...computed[status].headers, ...response.headers };
        // A route may also answer an error as a page (the OAuth browser routes): other media types declared on the handler are kept.
        if (Number(status) >= 400 && response.content)
          computed[status].content = {
            ...computed[status].content,
            ...Object.fromEntries(Object.entries(response.content).filter(([media]) => media !== 'application/json')),
          };
      }
      const success = Object.entries(existing).filter(([status]) => Number(status) < 400);
      operation.responses = Object.fromEntries([...success, ...Object.entries(computed)].sort(([a], [b]) => Number(a) - Number(b)));
    }
  }
}

type Schema = SchemaObject | ReferenceObject;

/**
 * Closes object schemas (`additionalProperties: false`) unless they say otherwise: the validation
 * pipe refuses unknown request fields, and a response must not carry a field the document omits.
 * Free-form objects (metadata, a detail section's object) declare `additionalProperties: true`.
 */
function closeObjects(schema: Schema | undefined): void {
  if (!schema || '$ref' in schema) return;
  // A bare `allOf` of one named schema (Nest's form for a named enum) is that schema.
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    if ('allOf' in child && child.allOf?.length === 1 && Object.keys(child).length === 1) (schema.properties as Record<string, Schema>)[name] = child.allOf[0];
  }
  if (schema.properties && schema.additionalProperties === undefined) schema.additionalProperties = false;
  for (const child of Object.values(schema.properties ?? {})) closeObjects(child);
  if (schema.items) closeObjects(schema.items);
  if (typeof schema.additionalProperties === 'object') closeObjects(schema.additionalProperties);
  for (const child of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) closeObjects(child);
}

function closeAllObjects(document: OpenAPIObject): void {
  for (const schema of Object.values(document.components?.schemas ?? {})) closeObjects(schema);
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = (item as PathItemObject)[method];
      if (!operation) continue;
      const bodies = [operation.requestBody, ...Object.values(operation.responses)].filter((b) => b && !('$ref' in b)) as {
        content?: Record<string, { schema?: Schema }>;
      }[];
      for (const body of bodies) for (const media of Object.values(body.content ?? {})) closeObjects(media.schema);
    }
  }
}

function declareTags(document: OpenAPIObject): void {
  const used = new Set<string>();
  for (const item of Object.values(document.paths)) for (const method of METHODS) for (const tag of (item as PathItemObject)[method]?.tags ?? []) used.add(tag);
  document.tags = [...used].sort().map((name) => (TAGS[name] ? { name, description: TAGS[name] } : { name }));
}

/** Builds the OpenAPI document: bearer auth everywhere, the error body, and the error catalogue. */
export function buildOpenApiDocument(app: INestApplication, appConfig?: AppConfig): OpenAPIObject {
  const limits = appConfig
    ? '\n\n' +
      `**Request bodies.** JSON only (\`application/json\`, UTF-8; anything else is \`415\`), at most 1 MB (\`413\`), ` +
      `nested at most ${appConfig.bodyMaxDepth} levels deep (\`400\` naming the path) and with at most ${appConfig.bodyMaxKeys} keys and array items in all (\`413\`); ` +
      'strings may not contain U+0000. These limits are checked before validation.\n\n' +
      describeRateLimits(appConfig)
    : '';
  const config = new DocumentBuilder()
    .setTitle('Delivery Platform API')
    .setDescription(
      'JSON-over-HTTP API for merge queues, API keys, projects, pipelines, execution environments, integrations, ' +
        'git servers, service accounts, managed domains, reports and CI usage imports.\n\n' +
        'Requests that create or submit carry `{data: {...}}`; responses are `{data}`, lists `{data, meta}` ' +
        '(query `cursor` and `limit`, default 20, max 100). Every error is the error body; each operation lists the codes ' +
        'it can answer with under its statuses, and the whole catalogue is in `x-error-catalogue`.' +
        limits,
    )
    .setVersion('0.0.0')
    .addServer('/', 'The server that serves this document')
    // Tokens are opaque API keys (`dpa_` + random + checksum), not JWTs: Nest's default bearerFormat would say JWT.
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'opaque API key', description: 'An API key token (`dpa_…`), opaque to clients' },
      BEARER_SCHEME,
    )
    .addSecurityRequirements(BEARER_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [ErrorBodyDto] });
  closeAllObjects(document);
  declareErrors(app, document);
  declareTags(document);
  (document as OpenAPIObject & { 'x-error-catalogue': unknown })['x-error-catalogue'] = errorCatalogue().map(({ code, status, message }) => ({
    code,
    status,
    message,
  }));
  // Every code is declared by the time the modules are imported, so the enum is complete here.
  const codeSchema = (document.components?.schemas?.ErrorBodyDto as { properties?: Record<string, { enum?: string[] }> } | undefined)?.properties?.code;
  if (codeSchema) codeSchema.enum = errorCatalogue().map((e) => e.code);
  return document;
}

export function setupSwagger(app: INestApplication): OpenAPIObject {
  const document = buildOpenApiDocument(app, app.get<AppConfig>(APP_CONFIG));
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs-json', yamlDocumentUrl: 'docs-yaml' });
  return document;
}
