import { HttpException, HttpStatus } from '@nestjs/common';
import { Prisma } from '@/generated/prisma/client';
import { AppError } from './app-error';
import type { ErrorBody } from './error-body';
import { RequestErrors, AuthErrors, ResourceErrors, ServerErrors } from './common.errors';
import type { ErrorEntry } from './error-catalogue';
import { invalidFields } from './invalid-fields';
import { dependencyUnavailableError } from './dependency-errors';

export interface RenderedError {
  status: number;
  body: ErrorBody;
  /** Set for failures the caller did not cause; these are logged at error level. */
  internal: boolean;
  /** Response headers that go with the error, such as Retry-After. */
  headers?: Record<string, string>;
}

const HTTP_STATUS_TO_ENTRY: Partial<Record<number, ErrorEntry>> = {
  [HttpStatus.BAD_REQUEST]: RequestErrors.VALIDATION_FAILED,
  [HttpStatus.UNAUTHORIZED]: AuthErrors.UNAUTHENTICATED,
  [HttpStatus.FORBIDDEN]: AuthErrors.FORBIDDEN,
  [HttpStatus.NOT_FOUND]: RequestErrors.ROUTE_NOT_FOUND,
  [HttpStatus.METHOD_NOT_ALLOWED]: RequestErrors.METHOD_NOT_ALLOWED,
  [HttpStatus.CONFLICT]: ResourceErrors.CONFLICT,
  [HttpStatus.UNPROCESSABLE_ENTITY]: RequestErrors.UNPROCESSABLE,
  [HttpStatus.PAYLOAD_TOO_LARGE]: RequestErrors.PAYLOAD_TOO_LARGE,
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: RequestErrors.UNSUPPORTED_MEDIA_TYPE,
  [HttpStatus.TOO_MANY_REQUESTS]: RequestErrors.RATE_LIMITED,
  [HttpStatus.SERVICE_UNAVAILABLE]: ServerErrors.SERVICE_UNAVAILABLE,
};

function fromEntry(entry: ErrorEntry, extra: Partial<ErrorBody> = {}): RenderedError {
  return { status: entry.status, body: { code: entry.code, message: entry.message, ...extra }, internal: false };
}

/** body-parser (express.json) errors carry a `type` and a status. */
function fromBodyParser(error: { type?: string; status?: number }): RenderedError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return fromEntry(RequestErrors.MALFORMED_JSON);
    case 'entity.too.large':
      return fromEntry(RequestErrors.PAYLOAD_TOO_LARGE);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return fromEntry(RequestErrors.UNSUPPORTED_MEDIA_TYPE);
    default:
      return undefined;
  }
}

function fromPrisma(error: Prisma.PrismaClientKnownRequestError): RenderedError | undefined {
  switch (error.code) {
    case 'P2002': {
      const meta = error.meta as { target?: unknown; driverAdapterError?: { cause?: { constraint?: { fields?: string[] } } } } | undefined;
      const target = meta?.target ?? meta?.driverAdapterError?.cause?.constraint?.fields;
      const fields = Array.isArray(target) ? target.map(String) : [];
      return fromEntry(ResourceErrors.CONFLICT, fields.length ? { details: [invalidFields(fields, 'Conflicting fields')] } : {});
    }
    case 'P2025':
      return fromEntry(ResourceErrors.NOT_FOUND);
    case 'P2003':
      return fromEntry(ResourceErrors.INVALID_REFERENCE);
    default:
      return undefined;
  }
}

function fromHttpException(error: HttpException): RenderedError {
  // The express adapter wraps body-parser failures; the cause says which one it was.
  const fromParser = error.cause && typeof error.cause === 'object' ? fromBodyParser(error.cause as { type?: string }) : undefined;
  if (fromParser) return fromParser;
  const status = error.getStatus();
  const entry = HTTP_STATUS_TO_ENTRY[status];
  if (entry) {
    const rendered = fromEntry(entry);
    // Nest's own 404 for an unknown route says which route; keep that, it is not internal.
    const response = error.getResponse();
    const message = typeof response === 'object' && response && 'message' in response ? (response as { message: unknown }).message : undefined;
    if (typeof message === 'string' && status < 500) rendered.body.message = message;
    return rendered;
  }
  if (status >= 500) return { ...fromEntry(ServerErrors.INTERNAL), status, internal: true };
  // Any other client status keeps its number and gets the catalogue's generic client code.
  return { ...fromEntry(RequestErrors.CLIENT_ERROR, { message: error.message }), status };
}

/**
 * Turns anything thrown during a request into the spec's error body. Internal failures keep their
 * metadata and the `isInternal` flag only for superadmins: nobody else sees internals.
 */
export function renderError(error: unknown, options: { requestId?: string; superadmin?: boolean }): RenderedError {
  let rendered: RenderedError | undefined;
  if (error instanceof AppError) {
    const { message, description, details, metadata, action, headers } = error.options;
    rendered = {
      status: error.status,
      body: { code: error.entry.code, message: message ?? error.entry.message, description, details, metadata, action },
      internal: error.status >= 500 && error.status !== 503,
      headers,
    };
  } else if (error instanceof HttpException) {
    rendered = fromHttpException(error);
  } else if (error instanceof Prisma.PrismaClientKnownRequestError) {
    rendered = fromPrisma(error);
  } else if (error && typeof error === 'object' && 'type' in error) {
    rendered = fromBodyParser(error as { type?: string });
  }
  if (!rendered) {
    const unavailable = dependencyUnavailableError(error);
    if (unavailable) return renderError(unavailable, options);
  }
  if (!rendered) {
    const err = error instanceof Error ? error : new Error(String(error));
    rendered = { ...fromEntry(ServerErrors.INTERNAL, { metadata: { name: err.name, message: err.message } }), internal: true };
  }
  const body = rendered.body;
  if (rendered.internal) {
    if (options.superadmin) body.isInternal = true;
    else delete body.metadata;
  }
  if (options.requestId) body.requestId = options.requestId;
  for (const key of Object.keys(body) as (keyof ErrorBody)[]) if (body[key] === undefined) delete body[key];
  return rendered;
}
