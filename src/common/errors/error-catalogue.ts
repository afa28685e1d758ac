/**
 * Every error code the API can return, with its HTTP status and default message. Codes have the
 * shape `<service>:<Domain>:<CODE>`; the OpenAPI document lists this catalogue.
 */
export const SERVICE = 'dpa';

const entry = <S extends number>(domain: string, code: string, status: S, message: string) =>
  ({ code: `${SERVICE}:${domain}:${code}`, status, message }) as const;

export const ErrorCatalogue = {
  VALIDATION_FAILED: entry('Request', 'VALIDATION_FAILED', 400, 'The request is invalid.'),
  MALFORMED_JSON: entry('Request', 'MALFORMED_JSON', 400, 'The request body is not valid JSON.'),
  READ_ONLY_FIELD: entry('Request', 'READ_ONLY_FIELD', 400, 'The request sets a read-only field.'),
  PAYLOAD_TOO_LARGE: entry('Request', 'PAYLOAD_TOO_LARGE', 413, 'The request body is too large.'),
  UNSUPPORTED_MEDIA_TYPE: entry('Request', 'UNSUPPORTED_MEDIA_TYPE', 415, 'The request body must be application/json.'),
  ROUTE_NOT_FOUND: entry('Request', 'ROUTE_NOT_FOUND', 404, 'No such route.'),
  METHOD_NOT_ALLOWED: entry('Request', 'METHOD_NOT_ALLOWED', 405, 'The route does not support this method.'),
  UNPROCESSABLE: entry('Request', 'UNPROCESSABLE', 422, 'The request cannot be processed.'),
  CLIENT_ERROR: entry('Request', 'CLIENT_ERROR', 400, 'The request cannot be served.'),
  RATE_LIMITED: entry('Request', 'RATE_LIMITED', 429, 'Too many requests.'),
  INVALID_CURSOR: entry('Pagination', 'INVALID_CURSOR', 400, 'The cursor is not valid for this list.'),
  UNAUTHENTICATED: entry('Auth', 'UNAUTHENTICATED', 401, 'A bearer token is required.'),
  INVALID_TOKEN: entry('Auth', 'INVALID_TOKEN', 401, 'The bearer token is not valid.'),
  TOKEN_EXPIRED: entry('Auth', 'TOKEN_EXPIRED', 401, 'The bearer token has expired.'),
  TOKEN_REVOKED: entry('Auth', 'TOKEN_REVOKED', 401, 'The bearer token has been revoked.'),
  FORBIDDEN: entry('Auth', 'FORBIDDEN', 403, 'You do not have permission for this operation.'),
  NOT_FOUND: entry('Resource', 'NOT_FOUND', 404, 'The resource does not exist.'),
  CONFLICT: entry('Resource', 'CONFLICT', 409, 'The resource conflicts with an existing one.'),
  INVALID_REFERENCE: entry('Resource', 'INVALID_REFERENCE', 422, 'The request refers to a resource that does not exist.'),
  PROJECT_NOT_FOUND: entry('Project', 'NOT_FOUND', 404, 'The project does not exist.'),
  PROJECT_GIVEN_ID_TAKEN: entry('Project', 'GIVEN_ID_TAKEN', 409, 'A project with this givenId already exists.'),
  EXECUTION_ENVIRONMENT_NOT_FOUND: entry('ExecutionEnvironment', 'NOT_FOUND', 404, 'The execution environment does not exist.'),
  EXECUTION_ENVIRONMENT_GIVEN_ID_TAKEN: entry('ExecutionEnvironment', 'GIVEN_ID_TAKEN', 409, 'An execution environment with this givenId already exists.'),
  SERVICE_ACCOUNT_NOT_FOUND: entry('ServiceAccount', 'NOT_FOUND', 404, 'The service account does not exist.'),
  SERVICE_ACCOUNT_NAME_TAKEN: entry('ServiceAccount', 'NAME_TAKEN', 409, 'A service account with this name already exists.'),
  API_KEY_NOT_FOUND: entry('ApiKey', 'NOT_FOUND', 404, 'The API key does not exist.'),
  API_KEY_OWNER_NOT_FOUND: entry('ApiKey', 'OWNER_NOT_FOUND', 422, 'The owner of the API key does not exist in this organization.'),
  API_KEY_EXPIRY_IN_PAST: entry('ApiKey', 'EXPIRY_IN_PAST', 422, 'expiresAt must be in the future.'),
  SERVICE_UNAVAILABLE: entry('Health', 'SERVICE_UNAVAILABLE', 503, 'A dependency of the service is unavailable.'),
  INTERNAL: entry('Server', 'INTERNAL', 500, 'An unexpected error occurred.'),
} as const;

export type ErrorCatalogueKey = keyof typeof ErrorCatalogue;
export type ErrorCatalogueEntry = (typeof ErrorCatalogue)[ErrorCatalogueKey];
