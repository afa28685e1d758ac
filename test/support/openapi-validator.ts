import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { NextFunction, Request, Response } from 'express';

/**
 * Checks every response an e2e test receives against the OpenAPI document the app serves: the
 * status is declared for the operation, and the body matches that response's schema (or is empty
 * when none is declared). Responses of paths the document does not describe are checked only to
 * be the error body when they are JSON errors. Violations are collected, not thrown, so the
 * request still completes; test/support/openapi-validation.setup.ts fails the test that caused them.
 */

type Json = Record<string, unknown>;
interface OpenApiDocument {
  paths: Record<string, Record<string, Json>>;
  components?: { schemas?: Record<string, unknown> };
}

const SCHEMA_ID = 'https://openapi.invalid/components/schemas/';
const ERROR_BODY = 'ErrorBodyDto';
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

// OpenAPI 3.0 keywords that JSON Schema (and so ajv) does not have; `nullable` is translated instead.
const OPENAPI_ONLY = new Set(['nullable', 'example', 'xml', 'externalDocs', 'discriminator']);
const SCHEMA_MAPS = new Set(['properties', 'patternProperties']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf']);
const SCHEMA_VALUES = new Set(['items', 'additionalProperties', 'not']);

/** An OpenAPI 3.0 schema object as JSON Schema draft-07: component `$ref`s resolvable by ajv, `nullable` as a null type. */
export function toJsonSchema(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return schema;
  const source = schema as Json;
  let out: Json = {};
  if (typeof source.$ref === 'string') {
    // OpenAPI 3.0 ignores the siblings of a $ref.
    out = { $ref: source.$ref.replace('#/components/schemas/', SCHEMA_ID) };
  } else {
    for (const [key, value] of Object.entries(source)) {
      if (OPENAPI_ONLY.has(key) || key.startsWith('x-')) continue;
      if (SCHEMA_MAPS.has(key)) out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, child]) => [name, toJsonSchema(child)]));
      else if (SCHEMA_LISTS.has(key)) out[key] = (value as unknown[]).map(toJsonSchema);
      else if (SCHEMA_VALUES.has(key)) out[key] = typeof value === 'object' ? toJsonSchema(value) : value;
      else out[key] = value;
    }
    // OpenAPI 3.0 spells exclusive bounds as booleans beside minimum/maximum; JSON Schema as numbers.
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (typeof out[flag] !== 'boolean') continue;
      if (out[flag] === true && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else delete out[flag];
    }
  }
  if (source.nullable !== true) return out;
  // A nullable composition (`type: object, allOf: [$ref], nullable`): the composed object, or null.
  if (out.$ref || out.type === undefined || out.allOf) return { anyOf: [out, { type: 'null' }] };
  out.type = [...[out.type].flat(), 'null'];
  if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  return out;
}

function describeErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => {
      const where = e.instancePath ? `body${e.instancePath.replace(/\//g, '.')}` : 'body';
      const params = e.params as { additionalProperty?: string; allowedValues?: unknown[] };
      const extra = params.additionalProperty ? ` (${params.additionalProperty})` : params.allowedValues ? ` (${params.allowedValues.join(', ')})` : '';
      return `${where} ${e.message}${extra}`;
    })
    .join('; ');
}

export interface ObservedResponse {
  method: string;
  /** The request path without its query string. */
  path: string;
  status: number;
  contentType: string | undefined;
  /** The body when it is JSON (other bodies are only counted). */
  body: Buffer;
  bytes: number;
}

interface Template {
  template: string;
  pattern: RegExp;
  literals: number;
}

export class OpenApiResponseValidator {
  private readonly ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, allowUnionTypes: true });
  private readonly templates: Template[];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {
    addFormats(this.ajv);
    for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) this.ajv.addSchema(toJsonSchema(schema) as object, `${SCHEMA_ID}${name}`);
    this.templates = Object.keys(document.paths)
      .map((template) => {
        const segments = template.split('/');
        const pattern = new RegExp(`^${segments.map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`);
        return { template, pattern, literals: segments.filter((s) => !s.startsWith('{')).length };
      })
      // A literal segment wins over a parameter: /things/summaries before /things/{id}.
      .sort((a, b) => b.literals - a.literals);
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(toJsonSchema(schema) as object);
      this.compiled.set(key, validate);
    }
    return validate;
  }

  /** What is wrong with one response, as messages naming the operation and status; empty when it matches. */
  check(response: ObservedResponse): string[] {
    const method = response.method.toLowerCase();
    if (method === 'head') return [];
    const path = response.path.length > 1 ? response.path.replace(/\/+$/, '') : response.path;
    const template = this.templates.find((t) => t.pattern.test(path))?.template;
    const operation = template ? this.document.paths[template][method] : undefined;
    const isJson = /^application\/([\w.+-]+\+)?json\b/i.test(response.contentType ?? '');
    const where = `${response.method.toUpperCase()} ${template ?? path}${template && template !== path ? ` (${path})` : ''} -> ${response.status}`;
    const parse = (): { ok: true; value: unknown } | { ok: false } => {
      try {
        return { ok: true, value: JSON.parse(response.body.toString('utf8')) };
      } catch {
        return { ok: false };
      }
    };

    if (!operation || !METHODS.has(method)) {
      // Not an operation of the document (an unknown route, Swagger UI): only a JSON error must be the error body.
      if (response.status < 400 || !isJson) return [];
      const body = parse();
      if (!body.ok) return [`${where}: the error response is not valid JSON`];
      const validate = this.validator(`error-body`, { $ref: `#/components/schemas/${ERROR_BODY}` });
      return validate(body.value) ? [] : [`${where}: not the error body: ${describeErrors(validate.errors)}`];
    }

    const responses = operation.responses as Record<string, { content?: Record<string, { schema?: unknown }> }>;
    const declared = responses[String(response.status)] ?? responses[`${String(response.status)[0]}XX`] ?? responses.default;
    if (!declared) return [`${where}: status not declared (declared: ${Object.keys(responses).join(', ')})`];
    const media = declared.content?.['application/json'];
    // A declared non-JSON answer (an HTML page for browsers): its media type is all that is checked.
    const mediaType = (response.contentType ?? '').split(';')[0].trim().toLowerCase();
    if (!isJson && mediaType && mediaType !== 'application/json' && declared.content?.[mediaType]) return [];
    if (!media) {
      return response.bytes === 0 ? [] : [`${where}: has a body (${response.contentType ?? 'no Content-Type'}) but the document declares none`];
    }
    if (!isJson) return [`${where}: Content-Type is ${response.contentType ?? 'absent'}, the document declares application/json`];
    const body = parse();
    if (!body.ok) return [`${where}: the body is not valid JSON`];
    if (!media.schema) return [];
    const validate = this.validator(`${method} ${template} ${response.status}`, media.schema);
    return validate(body.value) ? [] : [`${where}: ${describeErrors(validate.errors)}`];
  }
}

const VIOLATIONS = Symbol.for('dpa.test.openapiResponseViolations');
const validators = new Map<string, OpenApiResponseValidator>();

function violations(): string[] {
  const store = globalThis as { [VIOLATIONS]?: string[] };
  return (store[VIOLATIONS] ??= []);
}

/** The violations seen since the last call, which forgets them. */
export function takeResponseViolations(): string[] {
  return violations().splice(0);
}

/** Throws, naming each violation, when responses broke the document since the last check. */
export function assertNoResponseViolations(): void {
  const found = takeResponseViolations();
  if (found.length > 0) throw new Error(`${found.length} response(s) do not match the OpenAPI document (/docs-json):\n- ${[...new Set(found)].join('\n- ')}`);
}

/**
 * Express middleware, installed before everything else, that records what each response sends
 * and checks it when it ends. It checks nothing until `use(document)` gives it the document.
 */
export class ResponseValidation {
  private validator: OpenApiResponseValidator | undefined;

  use(document: OpenApiDocument): void {
    const key = JSON.stringify(document);
    let validator = validators.get(key);
    if (!validator) {
      validator = new OpenApiResponseValidator(document);
      validators.set(key, validator);
    }
    this.validator = validator;
  }

  readonly middleware = (req: Request, res: Response, next: NextFunction): void => {
    const method = req.method;
    const path = req.originalUrl.split('?')[0];
    const chunks: Buffer[] = [];
    let bytes = 0;
    const keep = (chunk: unknown, encoding: unknown): void => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
      bytes += buffer.length;
      if (/json/i.test(String(res.getHeader('content-type') ?? ''))) chunks.push(buffer);
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
      keep(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as Response['write'];
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      keep(chunk, rest[0]);
      const validator = this.validator;
      if (validator) {
        const contentType = res.getHeader('content-type');
        try {
          violations().push(
            ...validator.check({
              method,
              path,
              status: res.statusCode,
              contentType: contentType === undefined ? undefined : String(contentType),
              body: Buffer.concat(chunks),
              bytes,
            }),
          );
        } catch (error) {
          violations().push(`${method} ${path} -> ${res.statusCode}: the validator failed: ${(error as Error).stack ?? String(error)}`);
        }
      }
      return (end as (...args: unknown[]) => Response).call(res, chunk, ...rest);
    }) as Response['end'];
    next();
  };
}
