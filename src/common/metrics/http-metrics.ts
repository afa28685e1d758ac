import type { NextFunction, Request, Response } from 'express';
import type { MetricsService } from './metrics.service';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The label for a request's route: the matched route template, never the raw path (which would hold ids). */
export function routeLabel(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  // A wildcard is a catch-all (Nest's not-found route), not a route of the API.
  if (typeof path === 'string' && !path.includes('*')) return `${req.baseUrl ?? ''}${path}`;
  // No route matched (a 404, or a request refused by middleware before routing: body limits, media type).
  return '(unmatched)';
}

/** Times every request of the public API into dpa_http_request_duration_seconds{method, route, status}. */
export function httpMetricsMiddleware(metrics: MetricsService) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const end = metrics.httpRequestDuration.startTimer();
    res.once('finish', () => {
      end({ method: METHODS.has(req.method) ? req.method : 'OTHER', route: routeLabel(req), status: String(res.statusCode) });
    });
    next();
  };
}
