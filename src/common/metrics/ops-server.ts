import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestErrors, ServerErrors } from '@/common/errors/common.errors';
import type { ErrorBody } from '@/common/errors/error-body';

export interface OpsResponse {
  status: number;
  contentType: string;
  body: string;
  headers?: Record<string, string>;
}

export type OpsRoute = () => Promise<OpsResponse>;

/** The spec's error body for the operations listener (no Nest here: it must answer while the app is busy or closing). */
export function opsError(status: number, code: string, message: string, extra: Partial<ErrorBody> = {}): OpsResponse {
  const body: ErrorBody = { code, message, ...extra, requestId: randomUUID() };
  return { status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(body) };
}

const MAX_CONNECTIONS = 64;

/**
 * A small HTTP listener for operators, apart from the public API: the API's /metrics, the worker's
 * health and metrics. GET (and HEAD) only; anything else is the spec's 404/405 error body.
 */
export class OpsServer {
  private constructor(private readonly server: Server) {}

  /** Listens on `host` (METRICS_HOST / WORKER_HEALTH_HOST: loopback unless widened for a container). */
  static async start(port: number, routes: Record<string, OpsRoute>, host: string): Promise<OpsServer> {
    const server = createServer((req, res) => void handle(routes, req, res));
    // A few scrapers and probes, never a crowd: more sockets than this are refused at once.
    server.maxConnections = MAX_CONNECTIONS;
    server.keepAliveTimeout = 5_000;
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new OpsServer(server);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get host(): string {
    return (this.server.address() as AddressInfo).address;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

async function handle(routes: Record<string, OpsRoute>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  let response: OpsResponse;
  const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
  if (!route) response = opsError(404, RequestErrors.ROUTE_NOT_FOUND.code, `No route ${req.method} ${path.slice(0, 200)} on this listener.`);
  else if (req.method !== 'GET' && req.method !== 'HEAD')
    response = { ...opsError(405, RequestErrors.METHOD_NOT_ALLOWED.code, RequestErrors.METHOD_NOT_ALLOWED.message), headers: { Allow: 'GET, HEAD' } };
  else {
    try {
      response = await route();
    } catch {
      response = opsError(500, ServerErrors.INTERNAL.code, ServerErrors.INTERNAL.message);
    }
  }
  res.writeHead(response.status, {
    'Content-Type': response.contentType,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(response.headers ?? {}),
  });
  res.end(req.method === 'HEAD' ? undefined : response.body);
}
