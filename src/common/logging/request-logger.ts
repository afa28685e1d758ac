import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Level, type Logger as PinoLogger } from 'pino';
import { currentRequestContext } from '@/common/http/request-context';
import { serializeError } from './error-serializer';
import { redactTokens, redactUrl } from './redaction';

/**
 * The process's logger and the access log, written for the request path (replacing nestjs-pino +
 * pino-http, issue 22): the same lines, field for field, with less work per request.
 *
 * - One AsyncLocalStorage (request-context.ts) instead of two: nestjs-pino kept its own store.
 * - No child logger per request: pino-http made one for every request (serialising and redacting
 *   its `req` binding) whether or not anything was logged during it; here a request's lines bind
 *   `req` through a child made on the first line logged while serving it, and the access line
 *   passes `req` as a field (pino writes bindings before fields, so the line reads the same:
 *   level, time, pid, hostname, req, res, responseTime, msg).
 * - `req` and `res` are serialised straight to the fields written (pino-std-serializers first
 *   copied every header and `getHeaders()` into an object that was then thrown away).
 */

/** `req` as logged: id, method, and the URL as the client sent it, credentials removed (pino-std-serializers' choice of URL). */
export function serializeRequest(req: { id?: unknown; method?: string; originalUrl?: string; path?: unknown; url?: unknown; info?: { id?: unknown } }): {
  id: unknown;
  method: string | undefined;
  url: string | undefined;
} {
  const id = typeof req.id === 'function' ? (req.id as () => unknown)() : req.id || (req.info ? req.info.id : undefined);
  let url: unknown;
  if (req.originalUrl) url = req.originalUrl;
  else if (typeof req.path === 'string') url = req.path;
  else url = req.url ? ((req.url as { path?: string }).path ?? req.url) : undefined;
  return { id, method: req.method, url: url === undefined ? undefined : redactUrl(url as string) };
}

/** `res` as logged: the status once headers went out (null before, as pino-std-serializers). */
export function serializeResponse(res: { headersSent?: boolean; statusCode?: number }): { statusCode: number | null | undefined } {
  return { statusCode: res.headersSent ? res.statusCode : null };
}

/** The root logger: JSON lines, credentials removed before anything is written. */
export function createRootLogger(level: string, destination: DestinationStream): PinoLogger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]', 'res.headers["set-cookie"]', '*.token', '*.*.token'],
        remove: true,
      },
      // The last line of defence: whatever ends up in a line (a header, an error message, a
      // URL echoed by a library), a token-shaped string never reaches the output.
      hooks: { streamWrite: redactTokens },
      // Never throws on a frozen error (pino's own tags each error it walks): logging a failure must not become one.
      serializers: { req: serializeRequest, res: serializeResponse, err: serializeError },
    },
    destination,
  );
}

/** The logger for the current line: the request's (bound to `req`, made on first use) while serving one, else the root. */
export function contextLogger(root: PinoLogger): PinoLogger {
  const context = currentRequestContext();
  if (!context?.request) return root;
  return (context.logger ??= root.child({ req: context.request })) as PinoLogger;
}

type AccessRequest = IncomingMessage & { id?: string; originalUrl?: string; readableAborted?: boolean };
type AccessResponse = ServerResponse & { err?: unknown };

export function accessLogLevel(res: { statusCode: number }, err?: unknown): Level {
  return err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
}

/**
 * The access log: one line when the response finishes (or the connection closes first), as
 * pino-http wrote it: `request completed` / `request aborted`, or `request errored` with `err`
 * for a 5xx or an error. Binds the request to the request context for the lines logged meanwhile.
 */
export function accessLogMiddleware(root: PinoLogger) {
  return function accessLog(req: AccessRequest, res: AccessResponse, next: () => void): void {
    const startedAt = Date.now();
    req.id ||= randomUUID();
    const context = currentRequestContext();
    if (context) context.request = req;
    const done = (err?: unknown) => {
      res.removeListener('close', done);
      res.removeListener('finish', done);
      res.removeListener('error', done);
      const responseTime = Date.now() - startedAt;
      const failed = err || res.err;
      const level = accessLogLevel(res, failed);
      if (!root.isLevelEnabled(level)) return;
      if (failed || res.statusCode >= 500) {
        const error = failed || new Error(`failed with status code ${res.statusCode}`);
        root[level]({ req, res, err: error, responseTime }, 'request errored');
        return;
      }
      root[level]({ req, res, responseTime }, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
    };
    res.on('close', done);
    res.on('finish', done);
    res.on('error', done);
    next();
  };
}

/**
 * Nest's logger on the root logger (nestjs-pino's `Logger` contract): the last extra argument is
 * the context, an object first argument is merged into the line, an Error becomes `err`.
 */
export class AppLogger implements LoggerService {
  constructor(readonly root: PinoLogger) {}

  verbose(message: unknown, ...optionalParams: unknown[]): void {
    this.call('trace', message, optionalParams);
  }

  debug(message: unknown, ...optionalParams: unknown[]): void {
    this.call('debug', message, optionalParams);
  }

  log(message: unknown, ...optionalParams: unknown[]): void {
    this.call('info', message, optionalParams);
  }

  warn(message: unknown, ...optionalParams: unknown[]): void {
    this.call('warn', message, optionalParams);
  }

  error(message: unknown, ...optionalParams: unknown[]): void {
    this.call('error', message, optionalParams);
  }

  fatal(message: unknown, ...optionalParams: unknown[]): void {
    this.call('fatal', message, optionalParams);
  }

  private call(level: Level, message: unknown, optionalParams: unknown[]): void {
    const logger = contextLogger(this.root);
    const fields: Record<string, unknown> = {};
    let params: unknown[] = [];
    if (optionalParams.length !== 0) {
      fields.context = optionalParams[optionalParams.length - 1];
      params = optionalParams.slice(0, -1);
    }
    const write = logger[level].bind(logger) as (...args: unknown[]) => void;
    if (typeof message === 'object') {
      if (message instanceof Error) fields.err = message;
      else Object.assign(fields, message);
      write(fields, ...params);
    } else if (level === 'error' && typeof message === 'string' && params.length === 1 && typeof params[0] === 'string' && /\n\s*at /.test(params[0])) {
      // Nest's exception handlers call error(message, stack, context).
      const err = new Error(message);
      err.stack = params[0];
      fields.err = err;
      write(fields);
    } else {
      write(fields, message, ...params);
    }
  }
}
