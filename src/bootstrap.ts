import type { NestExpressApplication, NestExpressBodyParserOptionsFor } from '@nestjs/platform-express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';
import type { Request } from 'express';
import { requestIdMiddleware } from '@/common/logging/request-id.middleware';
import { accessLogMiddleware, AppLogger } from '@/common/logging/request-logger';
import { createValidationPipe } from '@/common/http/validation';
import { bodyGuardMiddleware, bodyRejectionHandler, JSON_MEDIA_TYPES, mediaTypeMiddleware, rawBodyRouteOf, verifyJsonBody } from '@/common/http/body-guard';
import { JUNIT_BODY_MAX_BYTES, JUNIT_REPORT_ROUTE } from '@/modules/merge-queues/check-reports/junit-route';
import { ParameterGuardPipe } from '@/common/http/parameter-guard.pipe';
import { parseQueryString } from '@/common/http/query-parser';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { setupSwagger } from '@/common/swagger/swagger';
import { httpMetricsMiddleware } from '@/common/metrics/http-metrics';
import { MetricsService } from '@/common/metrics/metrics.service';

export const JSON_BODY_LIMIT = '1mb';
/** Routes under this prefix get their body as raw bytes (a Buffer: the signed bytes), parsed by their service. */
export const WEBHOOK_PATH_PREFIX = '/webhooks/';

/**
 * Everything between creating the Nest application and listening: shared by main.ts and the e2e
 * tests so both run the same stack. The app must be created with `bodyParser: false`.
 */
export function configureApp(app: NestExpressApplication): void {
  const logger = app.get(AppLogger);
  app.useLogger(logger);
  // First, so the histogram times every request, refused ones included.
  app.use(httpMetricsMiddleware(app.get(MetricsService)));
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', parseQueryString);
  app.use(requestIdMiddleware);
  const config = app.get<AppConfig>(APP_CONFIG);
  app.use(securityHeaders());
  // CORS stays off (no Access-Control-* headers, browsers refuse cross-origin reads) unless origins are configured.
  if (config.corsOrigins.length > 0) {
    app.enableCors({
      origin: config.corsOrigins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'If-Match', 'X-Request-Id'],
      exposedHeaders: ['X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy', 'Location'],
      credentials: false,
      maxAge: 600,
    });
  }
  // Non-JSON bodies are refused before parsing, so no route mistakes one for a missing body; JSON
  // bodies are bounded (depth, keys, storable strings) before anything transforms or validates them.
  app.use(mediaTypeMiddleware([JUNIT_REPORT_ROUTE]));
  const limits = { maxDepth: config.bodyMaxDepth, maxKeys: config.bodyMaxKeys };
  // Webhook routes read their body as raw bytes, up to GitHub's 25 MB (WEBHOOK_BODY_MAX_BYTES): their
  // signature is an HMAC of the body as sent, checked before the service parses it once under its own
  // key limit (WEBHOOK_BODY_MAX_KEYS). The raw parser marks the body read, so the JSON parser below
  // skips them, and so do BODY_MAX_KEYS and the 1 MB limit.
  const isWebhook = (req: Request) => req.url.startsWith(WEBHOOK_PATH_PREFIX) && req.is(JSON_MEDIA_TYPES) !== false;
  app.useBodyParser('raw', { limit: config.webhooks.bodyMaxBytes, type: isWebhook } as NestExpressBodyParserOptionsFor<'raw'>);
  // A JUnit XML report (POST /merge-queues/{id}/batches/{batchId}/checks/junit) is read as raw bytes
  // up to JUNIT_BODY_MAX_BYTES (what it inflates to, when sent compressed): its service reads the XML.
  const isJunit = (req: Request) => rawBodyRouteOf(req, [JUNIT_REPORT_ROUTE]) !== undefined;
  app.useBodyParser('raw', { limit: JUNIT_BODY_MAX_BYTES, type: isJunit } as NestExpressBodyParserOptionsFor<'raw'>);
  // Nest's types leave out body-parser's `verify` because its rawBody option uses it; we don't use
  // rawBody, and verify is the one hook that runs between reading the body and JSON.parse.
  const jsonOptions = { limit: JSON_BODY_LIMIT, type: JSON_MEDIA_TYPES, verify: verifyJsonBody(limits) };
  app.useBodyParser('json', jsonOptions as NestExpressBodyParserOptionsFor<'json'>);
  app.use(bodyRejectionHandler);
  app.use(bodyGuardMiddleware(limits));
  app.useGlobalPipes(new ParameterGuardPipe(), createValidationPipe());
  // No enableShutdownHooks here: main.ts drains the HTTP server first, then closes the app (see graceful-shutdown.ts).
  setupSwagger(app);
  // Last, where nestjs-pino's middleware ran (Nest mounted it after these): requests refused by
  // the body checks above have no access-log line, as before.
  app.use(accessLogMiddleware(logger.root));
}

/**
 * Helmet's headers. The Content-Security-Policy is Helmet's default, which Swagger UI at /docs
 * works under (its scripts are files of this origin, its styles inline, its images data: URLs),
 * without `upgrade-insecure-requests`, which would break /docs on a plain-http deployment.
 */
export const HELMET_OPTIONS: Parameters<typeof helmet>[0] = { contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } } };

/**
 * With HELMET_OPTIONS every header Helmet sends is the same on every response (no nonce, no
 * directive computed from the request), so Helmet runs once, on a response that records what it
 * sets and removes, and each request gets that record in one step instead of Helmet's chain of
 * twelve middlewares (about 12 µs per request of the list path). A setting that made Helmet fail or
 * answer asynchronously would make that dry run throw here, at boot.
 */
export function securityHeaders(): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  const helmetMiddleware = helmet(HELMET_OPTIONS);
  // In Helmet's order: [name, value] is set, [name] removed.
  const steps: ([string, string] | [string])[] = [];
  const recorder = {
    setHeader: (name: string, value: string) => steps.push([name, String(value)]),
    removeHeader: (name: string) => steps.push([name]),
  };
  let finished = false;
  helmetMiddleware({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err instanceof Error ? err : new Error(String(err));
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish synchronously: its headers cannot be computed once');
  return (_req, res, next) => {
    for (const [name, value] of steps) {
      if (value === undefined) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    next();
  };
}
