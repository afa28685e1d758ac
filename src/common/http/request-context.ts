import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What the rest of a request knows about it without the request object: its id (audit records)
 * and, once the access log has started, the request for log lines (the request logger binds it
 * on first use). The process's only AsyncLocalStorage on the request path: every store costs
 * every promise of the request a propagation.
 */
export interface RequestContext {
  requestId: string;
  /** Set by the access log: log lines written while serving the request carry it as `req`. */
  request?: object;
  /** The logger bound to `request`, made on the first line logged during the request. */
  logger?: unknown;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs the rest of a request with its context available to code that has no request object. */
export function runInRequestContext<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

/** The context of the request being served, when there is one. */
export function currentRequestContext(): RequestContext | undefined {
  return storage.getStore();
}

/** The id of the request being served, when there is one. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
