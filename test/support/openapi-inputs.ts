import type { RouteInfo } from './routes';

/** The parts of an OpenAPI 3.0 document the abuse suite reads. */
export interface Schema {
  $ref?: string;
  type?: string;
  format?: string;
  enum?: unknown[];
  example?: unknown;
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  nullable?: boolean;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
  'x-error-catalogue'?: { code: string; status: number; message: string }[];
}

/** One leaf of a request payload: where it sits in the body and its schema. */
export interface BodyField {
  /** JSON path as the API names it, e.g. `data.name`. */
  path: string;
  keys: string[];
  schema: Schema;
  required: boolean;
}

export class OpenApi {
  constructor(readonly document: OpenApiDocument) {}

  /** `/projects/:id` -> `/projects/{id}`, then the operation of that method. */
  operation(route: RouteInfo): Operation | undefined {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    return this.document.paths[path]?.[route.method];
  }

  resolve(schema: Schema | undefined, seen = 0): Schema {
    if (!schema || seen > 20) return {};
    if (schema.$ref) {
      const name = schema.$ref.replace('#/components/schemas/', '');
      return this.resolve(this.document.components?.schemas?.[name], seen + 1);
    }
    if (schema.allOf?.length) {
      const parts = schema.allOf.map((s) => this.resolve(s, seen + 1));
      // allOf around a scalar (an enum declared once and referenced): the field is that scalar.
      if (parts.every((p) => !p.properties && p.type !== 'object')) return Object.assign({}, ...parts, { ...schema, allOf: undefined });
      return {
        ...schema,
        allOf: undefined,
        type: 'object',
        properties: Object.assign({}, ...parts.map((p) => p.properties ?? {}), schema.properties ?? {}),
        required: [...parts.flatMap((p) => p.required ?? []), ...(schema.required ?? [])],
      };
    }
    return schema;
  }

  /** The JSON request body schema of a route, resolved; undefined for routes without one. */
  bodySchema(route: RouteInfo): Schema | undefined {
    const content = this.operation(route)?.requestBody?.content;
    if (!content) return undefined;
    const json = content['application/json'] ?? Object.entries(content).find(([type]) => type.endsWith('json'))?.[1];
    return json?.schema ? this.resolve(json.schema) : undefined;
  }

  parameters(route: RouteInfo, where: 'path' | 'query'): Parameter[] {
    return (this.operation(route)?.parameters ?? []).filter((p) => p.in === where);
  }

  /** Every leaf field of a body schema (objects are walked, arrays and scalars are leaves), depth-first. */
  fields(schema: Schema, prefix: string[] = [], requiredHere = true, depth = 0): BodyField[] {
    const out: BodyField[] = [];
    const resolved = this.resolve(schema);
    for (const [name, raw] of Object.entries(resolved.properties ?? {})) {
      const child = this.resolve(raw);
      const keys = [...prefix, name];
      const required = requiredHere && (resolved.required ?? []).includes(name);
      if (child.properties && depth < 6) out.push(...this.fields(child, keys, required, depth + 1));
      else out.push({ path: keys.join('.'), keys, schema: { ...child, nullable: raw.nullable ?? child.nullable }, required });
    }
    return out;
  }

  /**
   * A body the schema accepts, as far as a schema can tell: required properties only, from
   * `example`, `enum`, `default`, or a plain value of the type. `known` supplies values the schema
   * cannot (ids of existing resources), by property name.
   */
  example(schema: Schema, known: Record<string, unknown> = {}, name = '', depth = 0): unknown {
    const s = this.resolve(schema);
    if (name in known) return known[name];
    if (s.example !== undefined) return s.example;
    if (s.enum?.length) return s.enum[0];
    if (s.default !== undefined) return s.default;
    if (s.properties || s.type === 'object') {
      const out: Record<string, unknown> = {};
      if (depth > 6) return out;
      for (const key of s.required ?? []) out[key] = this.example(s.properties?.[key] ?? {}, known, key, depth + 1);
      return out;
    }
    switch (s.type) {
      case 'string':
        if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
        return `abuse-${name || 'value'}`.slice(0, s.maxLength ?? 200).toLowerCase();
      case 'integer':
      case 'number':
        return s.minimum ?? 1;
      case 'boolean':
        return true;
      case 'array':
        return [];
      default:
        return 'x';
    }
  }
}

/** A deep copy of `body` with the value at `keys` replaced. */
export function withValue(body: unknown, keys: string[], value: unknown): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  let node = copy;
  for (const key of keys.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
  return copy;
}

/** `[[[...]]]` with `levels` brackets, written out directly: JSON.stringify recurses. */
export function deepArrayJson(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

export function deepObjectJson(levels: number): string {
  return '{"a":'.repeat(levels) + '{}' + '}'.repeat(levels);
}

/** `{"data":{"name":"x","k0":1,...}}` as close to `bytes` as it gets without passing it. */
export function manyKeysJson(bytes: number): { json: string; keys: number } {
  const parts: string[] = [];
  let size = '{"data":{"name":"x"}}'.length;
  for (let i = 0; ; i++) {
    const part = `,"k${i}":1`;
    if (size + part.length > bytes) break;
    parts.push(part);
    size += part.length;
  }
  return { json: `{"data":{"name":"x"${parts.join('')}}}`, keys: parts.length + 1 };
}
