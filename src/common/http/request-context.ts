import { AsyncLocalStorage } from 'node:async_hooks';

interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** Runs the rest of a request with its id available to code that has no request object (audit records). */
export function runInRequestContext<T>(requestId: string, fn: () => T): T {
  return storage.run({ requestId }, fn);
}

/** The id of the request being served, when there is one. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}
