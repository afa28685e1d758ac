import { STATUS_CODES } from 'node:http';
import { getSchemaPath } from '@nestjs/swagger';
import type { ResponseObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { AuthErrors, PaginationErrors, RequestErrors, ServerErrors } from './common.errors';
import { ErrorBodyDto } from './error-body';
import type { ErrorEntry } from './error-catalogue';

export const API_ERRORS = 'openapi:errors';

/**
 * Declares the catalogue entries a handler throws itself (or, on a controller, every handler of
 * it): `@ApiErrors(ProjectErrors.NOT_FOUND, ProjectErrors.GIVEN_ID_TAKEN)`. The errors every route
 * can give (validation, auth, role, rate limit, server) are added by `routeErrors`; the OpenAPI
 * document turns both into one response per status whose `code` is restricted to those entries.
 */
export function ApiErrors(...entries: ErrorEntry[]): ClassDecorator & MethodDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    const holder = (descriptor?.value ?? target) as object;
    const existing = (Reflect.getMetadata(API_ERRORS, holder) as ErrorEntry[] | undefined) ?? [];
    Reflect.defineMetadata(API_ERRORS, [...existing, ...entries], holder);
    return descriptor as never;
  };
}

/** What decides which errors a route can give, read from the same metadata the guards and pipes read. */
export interface RouteFacts {
  /** @Public(): the bearer guard lets it through, so no 401. */
  isPublic: boolean;
  /** @RequirePermission(p) or @RequireSuperadmin(): the guard answers 403 to a caller without it. */
  requiredPermission?: string;
  /** @SkipRateLimit(): no budget, so no 429. */
  skipsRateLimit: boolean;
  /** The handler validates a body or query DTO (whitelisting names read-only fields). */
  validatesInput: boolean;
  /** The handler takes a `cursor` query parameter. */
  paginated: boolean;
  /** The entries declared with @ApiErrors on the handler and its controller. */
  declared: ErrorEntry[];
}

/**
 * Every error entry a route can answer with. The middleware in front of every route (JSON only,
 * body parser, body guard) can refuse any request that carries a body, whatever its method.
 */
export function routeErrors(route: RouteFacts): ErrorEntry[] {
  const entries: ErrorEntry[] = [
    RequestErrors.VALIDATION_FAILED,
    RequestErrors.MALFORMED_JSON,
    RequestErrors.PAYLOAD_TOO_LARGE,
    RequestErrors.UNSUPPORTED_MEDIA_TYPE,
  ];
  if (route.validatesInput) entries.push(RequestErrors.READ_ONLY_FIELD);
  if (route.paginated) entries.push(PaginationErrors.INVALID_CURSOR);
  if (!route.isPublic) entries.push(...Object.values(AuthErrors).filter((e) => e.status === 401));
  if (route.requiredPermission) entries.push(AuthErrors.FORBIDDEN);
  if (!route.skipsRateLimit) entries.push(RequestErrors.RATE_LIMITED);
  entries.push(...route.declared, ServerErrors.INTERNAL, ServerErrors.SERVICE_UNAVAILABLE);
  return [...new Map(entries.map((e) => [e.code, e])).values()];
}

const RETRY_AFTER = { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } };

/** Headers that go with a status whatever the route (the rate limiter's, Retry-After of an outage). */
const STATUS_HEADERS: Partial<Record<number, ResponseObject['headers']>> = {
  429: {
    'Retry-After': RETRY_AFTER,
    'RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer', minimum: 0 } },
    'RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer', minimum: 0 } },
    'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer', minimum: 0 } },
  },
  503: { 'Retry-After': RETRY_AFTER },
};

/**
 * One response per status: the error body with `code` restricted to the entries of that status,
 * and a description listing them. `lead` gives a status a first line (e.g. the role required).
 */
export function errorResponses(entries: ErrorEntry[], lead: Partial<Record<number, string>> = {}): Record<string, ResponseObject> {
  const byStatus = new Map<number, ErrorEntry[]>();
  for (const entry of entries) byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), entry]);
  const responses: Record<string, ResponseObject> = {};
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const codes = group.map((e) => e.code);
    const list = group.map((e) => `- \`${e.code}\`: ${e.message}`).join('\n');
    const response: ResponseObject = {
      description: `${lead[status] ?? STATUS_CODES[status] ?? 'Error'}\n\n${list}`,
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: getSchemaPath(ErrorBodyDto) }, { type: 'object', properties: { code: { type: 'string', enum: codes } } }] },
        },
      },
    };
    const headers = STATUS_HEADERS[status];
    if (headers) response.headers = headers;
    responses[String(status)] = response;
  }
  return responses;
}
