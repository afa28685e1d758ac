/**
 * GitHub's published descriptions, loaded for the emulator's contract test: the REST OpenAPI
 * description (`@octokit/openapi`, OpenAPI 3.0.3), the webhook description
 * (`@octokit/openapi-webhooks`, OpenAPI 3.1) and the GraphQL schema (`@octokit/graphql-schema`),
 * with validators compiled by Ajv in each description's own dialect.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildClientSchema, type GraphQLSchema, type IntrospectionQuery } from 'graphql';

const MODULES = join(__dirname, '..', '..', 'node_modules');

type Json = Record<string, unknown>;

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: Json }[];
  responses: Record<string, Json>;
}

/**
 * An OpenAPI 3.0 Schema Object as JSON Schema (draft-07, which Ajv compiles): `nullable: true`
 * adds `null` to the `type` beside it (and to its `enum`); where there is no `type` (a `oneOf`, an
 * `allOf`...) the schema becomes "that, or null", the reading GitHub's description means. Local
 * `$ref`s are made absolute on `base` so they resolve from any compiled fragment.
 */
export function openapi30ToJsonSchema(schema: unknown, base: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => openapi30ToJsonSchema(s, base));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = value.startsWith('#') ? `${base}${value}` : value;
    else if (key === 'example' || key === 'examples' || key === 'nullable') continue;
    else if (key === 'properties' || key === 'patternProperties' || key === 'definitions')
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, openapi30ToJsonSchema(v, base)]));
    else out[key] = openapi30ToJsonSchema(value, base);
  }
  if ((schema as Json).nullable !== true) return out;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
    return out;
  }
  const { description, title, ...rest } = out;
  if (Object.keys(rest).length === 0) return out;
  return { ...(description !== undefined && { description }), ...(title !== undefined && { title }), anyOf: [rest, { type: 'null' }] };
}

/** Each named schema of a `components.schemas` map, converted. */
function eachSchema(schemas: unknown, convert: (schema: unknown) => unknown): Json {
  return Object.fromEntries(Object.entries(schemas as Json).map(([name, schema]) => [name, convert(schema)]));
}

function readJson(path: string): Json {
  return JSON.parse(readFileSync(join(MODULES, path), 'utf8')) as Json;
}

/** GitHub's REST API description (api.github.com), operations by method and path template. */
export class RestDescription {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly operations = new Map<string, Operation & { method: string; path: string }>();
  private readonly byId = new Map<string, Operation & { method: string; path: string }>();
  private readonly templates: { method: string; path: string; pattern: RegExp; literals: number; params: number }[] = [];
  private readonly components: Json;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    const description = readJson('@octokit/openapi/generated/api.github.com.json');
    if (!String(description.openapi).startsWith('3.0')) throw new Error(`expected OpenAPI 3.0, got ${String(description.openapi)}`);
    this.components = description.components as Json;
    addFormats(this.ajv);
    // Formats OpenAPI names that JSON Schema does not: the type beside them says it all.
    for (const format of ['int64', 'int32', 'timestamp', 'binary', 'repo.nwo', 'ssh-key', 'ssh-key fingerprint']) this.ajv.addFormat(format, true);
    this.ajv.addSchema(
      { $id: 'rest', components: { schemas: eachSchema((description.components as Json).schemas, (s) => openapi30ToJsonSchema(s, 'rest')) } } as never,
      'rest',
    );
    for (const [path, methods] of Object.entries(description.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        if (!operation || typeof operation !== 'object' || !('operationId' in operation)) continue;
        const entry = { ...operation, method: method.toUpperCase(), path };
        this.operations.set(`${entry.method} ${path}`, entry);
        this.byId.set(operation.operationId, entry);
        // A git ref may hold slashes (`heads/mq/q/b1`) when a client does not encode them.
        const source = path
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\{ref\}$/, '.+')
          .replace(/\{[^}]+\}/g, '[^/]+');
        this.templates.push({
          method: entry.method,
          path,
          pattern: new RegExp(`^${source}$`),
          literals: path.split('/').filter((segment) => !segment.includes('{')).length,
          params: (path.match(/\{/g) ?? []).length,
        });
      }
    }
    // The most literal segments first, then the fewest parameters (`/compare/{basehead}` before `/compare/{base}...{head}`).
    this.templates.sort((a, b) => b.literals - a.literals || a.params - b.params);
  }

  operationById(id: string): (Operation & { method: string; path: string }) | undefined {
    return this.byId.get(id);
  }

  /** The operation of a request: by Octokit's path template when it has one, else by matching the path. */
  operation(method: string, urlOrTemplate: string): (Operation & { method: string; path: string }) | undefined {
    const exact = this.operations.get(`${method} ${urlOrTemplate}`);
    if (exact) return exact;
    const path = new URL(urlOrTemplate, 'http://x').pathname;
    const template = this.templates.find((t) => t.method === method && t.pattern.test(path));
    return template && this.operations.get(`${method} ${template.path}`);
  }

  /** The response object an operation declares for a status (its `$ref` followed), or undefined. */
  response(operation: Operation, status: number): Json | undefined {
    let response = operation.responses[String(status)];
    while (response && typeof response.$ref === 'string') response = this.resolve(response.$ref);
    return response;
  }

  /** A validator of the JSON body an operation declares for a status (null: the status declares no body). */
  bodyValidator(operation: Operation & { method: string; path: string }, status: number): ValidateFunction | null {
    const key = `${operation.operationId} ${status}`;
    const cached = this.compiled.get(key);
    if (cached) return cached;
    const schema = (this.response(operation, status)?.content as Record<string, { schema?: unknown }> | undefined)?.['application/json']?.schema;
    if (!schema) return null;
    const validate = this.ajv.compile(openapi30ToJsonSchema(schema, 'rest') as Json);
    this.compiled.set(key, validate);
    return validate;
  }

  /** A validator of a named component schema (`basic-error` for the statuses GitHub sends but does not declare). */
  schema(name: string): ValidateFunction {
    return this.ajv.getSchema(`rest#/components/schemas/${name}`) as ValidateFunction;
  }

  private resolve(ref: string): Json {
    const parts = ref.replace(/^#\/components\//, '').split('/');
    return parts.reduce<Json>((node, part) => node[part] as Json, this.components);
  }
}

/** GitHub's webhook description (api.github.com, OpenAPI 3.1, so JSON Schema 2020-12): each webhook by event and action. */
export class WebhookDescription {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly webhooks: Record<string, { post: { parameters: { name: string; in: string; required?: boolean }[]; requestBody: Json } }>;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor() {
    const description = readJson('@octokit/openapi-webhooks/generated/api.github.com.json');
    if (!String(description.openapi).startsWith('3.1')) throw new Error(`expected OpenAPI 3.1, got ${String(description.openapi)}`);
    addFormats(this.ajv);
    for (const format of ['int64', 'int32', 'timestamp', 'binary']) this.ajv.addFormat(format, true);
    this.webhooks = description.webhooks as typeof this.webhooks;
    this.ajv.addSchema(
      { $id: 'webhooks', components: { schemas: eachSchema((description.components as Json).schemas, (s) => rebase(s, 'webhooks')) } } as never,
      'webhooks',
    );
  }

  /** The description's name of a delivery: `pull-request-synchronize` for event `pull_request`, action `synchronize`; `push` for push. */
  key(event: string, action: unknown): string {
    const base = event.replace(/_/g, '-');
    const withAction = typeof action === 'string' ? `${base}-${action.replace(/_/g, '-')}` : undefined;
    if (withAction && this.webhooks[withAction]) return withAction;
    return base;
  }

  has(key: string): boolean {
    return key in this.webhooks;
  }

  /** The header names the description requires of a delivery. */
  requiredHeaders(key: string): string[] {
    return this.webhooks[key].post.parameters.filter((p) => p.in === 'header' && p.required).map((p) => p.name);
  }

  payloadValidator(key: string): ValidateFunction {
    const cached = this.compiled.get(key);
    if (cached) return cached;
    const schema = (this.webhooks[key].post.requestBody.content as Record<string, { schema: unknown }>)['application/json'].schema;
    const validate = this.ajv.compile(rebase(schema, 'webhooks') as Json);
    this.compiled.set(key, validate);
    return validate;
  }
}

/** Local `$ref`s made absolute on `base` (the 3.1 description is JSON Schema already). */
function rebase(schema: unknown, base: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rebase(s, base));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === '$ref' && typeof value === 'string') out.$ref = value.startsWith('#') ? `${base}${value}` : value;
    else if (key === 'example' || key === 'examples') continue;
    else if (key === 'properties' || key === 'patternProperties' || key === '$defs')
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, rebase(v, base)]));
    else out[key] = rebase(value, base);
  }
  return out;
}

/**
 * GitHub's GraphQL schema from its introspection (`@octokit/graphql-schema`'s schema.json; the SDL
 * file of this version defines two fields twice, which `buildSchema` rightly refuses).
 */
export function graphqlSchema(): GraphQLSchema {
  return buildClientSchema(readJson('@octokit/graphql-schema/schema.json') as unknown as IntrospectionQuery);
}

/** Validation errors as one readable line each (path: message), at most `max`. */
export function describeErrors(validate: ValidateFunction, max = 12): string[] {
  return (validate.errors ?? []).slice(0, max).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
}
