import type { Server } from 'node:http';
import type { AppConfig } from '@/common/config/app-config';

/**
 * Bounds how long a client may hold a connection without completing a request: the headers
 * (headersTimeout), the whole request (requestTimeout) and an idle keep-alive connection. Call
 * before listen: Node checks these timeouts on an interval read when the server starts listening,
 * 30 s by default, which would let a slow client outstay headersTimeout by that much.
 */
export function applyServerTimeouts(server: Server, config: Pick<AppConfig, 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpKeepAliveTimeoutMs'>): void {
  server.headersTimeout = config.httpHeadersTimeoutMs;
  server.requestTimeout = config.httpRequestTimeoutMs;
  server.keepAliveTimeout = config.httpKeepAliveTimeoutMs;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(100, Math.min(1_000, config.httpHeadersTimeoutMs / 4));
}
