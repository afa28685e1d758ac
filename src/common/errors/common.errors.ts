import { defineErrors } from './error-catalogue';

/** Problems with the request itself, before any domain rule. */
export const RequestErrors = defineErrors('Request', {
  VALIDATION_FAILED: [400, 'The request is invalid.'],
  MALFORMED_JSON: [400, 'The request body is not valid JSON.'],
  READ_ONLY_FIELD: [400, 'The request sets a read-only field.'],
  PAYLOAD_TOO_LARGE: [413, 'The request body is too large.'],
  UNSUPPORTED_MEDIA_TYPE: [415, 'The request body must be application/json.'],
  ROUTE_NOT_FOUND: [404, 'No such route.'],
  METHOD_NOT_ALLOWED: [405, 'The route does not support this method.'],
  UNPROCESSABLE: [422, 'The request cannot be processed.'],
  CLIENT_ERROR: [400, 'The request cannot be served.'],
  RATE_LIMITED: [429, 'Too many requests.'],
});

export const PaginationErrors = defineErrors('Pagination', {
  INVALID_CURSOR: [400, 'The cursor is not valid for this list.'],
});

export const AuthErrors = defineErrors('Auth', {
  UNAUTHENTICATED: [401, 'A bearer token is required.'],
  INVALID_TOKEN: [401, 'The bearer token is not valid.'],
  TOKEN_EXPIRED: [401, 'The bearer token has expired.'],
  TOKEN_REVOKED: [401, 'The bearer token has been revoked.'],
  FORBIDDEN: [403, 'You do not have permission for this operation.'],
});

/** Generic resource outcomes, for failures no domain claimed (e.g. a Prisma P2002 not caught by a service). */
export const ResourceErrors = defineErrors('Resource', {
  NOT_FOUND: [404, 'The resource does not exist.'],
  CONFLICT: [409, 'The resource conflicts with an existing one.'],
  INVALID_REFERENCE: [422, 'The request refers to a resource that does not exist.'],
});

export const ServerErrors = defineErrors('Server', {
  INTERNAL: [500, 'An unexpected error occurred.'],
  SERVICE_UNAVAILABLE: [503, 'A dependency of the service is unavailable; try again shortly.'],
});
