import { promises as dnsPromises, lookup as systemLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import { addressRefusal, isIpLiteral, METADATA_ADDRESSES, type HostPolicy } from './host-policy';

/** A host (or the address it resolved to) the policy refuses; `reason` says which rule. */
export class HostRefusedError extends Error {
  readonly code = 'EHOSTREFUSED';
  constructor(readonly reason: string) {
    super(`connection refused by the outgoing request policy: ${reason}`);
  }
}

/** The name did not resolve (or the resolver did not answer in time). */
export class HostUnresolvedError extends Error {
  readonly code = 'EHOSTUNRESOLVED';
  constructor(
    readonly hostname: string,
    cause?: unknown,
  ) {
    super(`${hostname} does not resolve`, { cause });
  }
}

export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

/**
 * Resolves names through `servers` (`ip` or `ip:port`) when given, otherwise through the system
 * resolver. Both address families; every address is returned so that every one can be judged.
 */
export function makeResolve(servers: string[] | undefined, timeoutMs: number): Resolve {
  if (!servers?.length) {
    return async (hostname) => {
      try {
        return await dnsPromises.lookup(hostname, { all: true, verbatim: true });
      } catch (error) {
        throw new HostUnresolvedError(hostname, error);
      }
    };
  }
  const resolver = new dnsPromises.Resolver({ timeout: Math.min(timeoutMs, 5_000), tries: 1 });
  resolver.setServers(servers);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses: LookupAddress[] = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length === 0) throw new HostUnresolvedError(hostname, v4.status === 'rejected' ? v4.reason : undefined);
    return addresses;
  };
}

/** Resolves `hostname` and judges every address; the first refused one refuses the host. */
export async function resolveAllowed(hostname: string, policy: HostPolicy, resolve: Resolve): Promise<LookupAddress[]> {
  if (isIpLiteral(hostname)) {
    const refusal = addressRefusal(hostname, policy);
    if (refusal) throw new HostRefusedError(refusal);
    return [{ address: hostname.replace(/^\[|\]$/g, ''), family: hostname.includes(':') ? 6 : 4 }];
  }
  const addresses = await resolve(hostname);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy);
    if (refusal) throw new HostRefusedError(`${hostname} resolves to ${refusal}`);
  }
  return addresses;
}

/**
 * A `lookup` for sockets: resolves again at connect time and judges the addresses it will
 * actually connect to, so a name that changes its answer after the first check (DNS rebinding)
 * is refused here.
 */
export function guardedLookup(policy: HostPolicy, resolve: Resolve): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    resolveAllowed(hostname, policy, resolve).then(
      (addresses) => (options.all ? callback(null, addresses) : callback(null, addresses[0].address, addresses[0].family)),
      (error: unknown) => callback(error),
    );
  }) as LookupFunction;
}

// Never connected to, even with private hosts allowed: link-local (metadata), multicast, "this network".
// IPv4 only: request-filtering-agent matches each list entry against the address's own family and
// warns on the others; IPv6 names go through `guardedLookup`, which applies the whole policy.
const ALWAYS_DENIED = [
  '169.254.0.0/16',
  '224.0.0.0/4',
  '0.0.0.0/8',
  '240.0.0.0/4',
  ...METADATA_ADDRESSES.map((m) => m.cidr).filter((cidr) => !cidr.includes(':')),
];

export interface ProviderFetchOptions {
  /** Connection to last byte of the body. */
  timeoutMs: number;
  /** The most bytes a response body may have; past it the request is dropped (ResponseTooLargeError). */
  maxResponseBytes?: number;
  /** Judge every connection (self-hosted servers); absent for operator-configured provider URLs. */
  guard?: { policy: HostPolicy; resolve: Resolve };
}

/** The answer was longer than the configured cap: the connection is dropped as soon as it is. */
export class ResponseTooLargeError extends Error {
  readonly code = 'ERESPONSETOOLARGE';
}

/** The request took longer than the provider timeout. */
export class ProviderTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/**
 * A WHATWG `fetch` over node:http(s) for the provider clients (Octokit and gitbeaker take one).
 * Written here rather than taken from undici because the guard must see every connection: the
 * socket's `lookup` re-runs the policy and request-filtering-agent refuses IP literals and what a
 * lookup returns. No redirects are followed (a redirect could lead anywhere).
 */
export function providerFetch(options: ProviderFetchOptions): typeof fetch {
  const agents = options.guard
    ? {
        http: new RequestFilteringHttpAgent({
          keepAlive: false,
          allowPrivateIPAddress: options.guard.policy.allowPrivateHosts,
          denyIPAddressList: ALWAYS_DENIED,
        }),
        https: new RequestFilteringHttpsAgent({
          keepAlive: false,
          allowPrivateIPAddress: options.guard.policy.allowPrivateHosts,
          denyIPAddressList: ALWAYS_DENIED,
        }),
      }
    : { http: new http.Agent({ keepAlive: false }), https: new https.Agent({ keepAlive: false }) };
  const lookup = options.guard ? guardedLookup(options.guard.policy, options.guard.resolve) : systemLookup;
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const client = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : undefined;
    if (!client) throw new TypeError(`unsupported protocol ${url.protocol}`);
    // An IP literal is never looked up, so the socket's lookup cannot judge it: judge it here.
    if (options.guard && isIpLiteral(url.hostname)) {
      const refusal = addressRefusal(url.hostname, options.guard.policy);
      if (refusal) throw new HostRefusedError(refusal);
    }
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const body =
      init.body === undefined || init.body === null
        ? undefined
        : typeof init.body === 'string'
          ? init.body
          : Buffer.from(await new Response(init.body).arrayBuffer());
    return new Promise<Response>((resolve, reject) => {
      // Connection to the last byte of the body, however slowly it arrives (not an idle timeout): a
      // provider that dribbles its answer is dropped at the same time as one that never answers.
      const settle = () => {
        clearTimeout(timer);
        init.signal?.removeEventListener('abort', abort);
      };
      const fail = (error: unknown) => {
        settle();
        reject(error);
      };
      const drop = (error: Error) => {
        fail(error);
        req.destroy(error);
      };
      const req = client.request(
        url,
        { method: init.method ?? 'GET', headers, agent: url.protocol === 'https:' ? agents.https : agents.http, lookup },
        (res) => {
          const chunks: Buffer[] = [];
          let received = 0;
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            if (options.maxResponseBytes !== undefined && received > options.maxResponseBytes) {
              chunks.length = 0;
              drop(new ResponseTooLargeError(`the provider answered more than ${options.maxResponseBytes} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('error', fail);
          res.on('end', () => {
            settle();
            const responseHeaders = new Headers();
            for (const [key, value] of Object.entries(res.headers)) {
              if (Array.isArray(value)) value.forEach((v) => responseHeaders.append(key, v));
              else if (value !== undefined) responseHeaders.set(key, value);
            }
            const status = res.statusCode ?? 502;
            const nullBody = status === 204 || status === 304 || (status >= 100 && status < 200);
            const response = new Response(nullBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers: responseHeaders });
            // Clients read `response.url` (Octokit's pagination does); a constructed Response has none.
            Object.defineProperty(response, 'url', { value: url.toString() });
            resolve(response);
          });
        },
      );
      const timer = setTimeout(() => drop(new ProviderTimeoutError(`no complete answer from ${url.host} within ${options.timeoutMs} ms`)), options.timeoutMs);
      const abort = () => drop(Object.assign(new Error('aborted'), { name: 'AbortError' }));
      if (init.signal?.aborted) abort();
      else init.signal?.addEventListener('abort', abort, { once: true });
      req.on('error', fail);
      req.end(body);
    });
  }) as typeof fetch;
}

/**
 * `fetch` restricted to `origins`: a URL a provider hands back (a `Link` pagination header, a
 * redirect target a client follows) on any other origin is refused before a connection is made,
 * so the credentials of the request never leave for it.
 */
export function sameOriginFetch(inner: typeof fetch, origins: readonly string[]): typeof fetch {
  const allowed = new Set(origins.map((origin) => new URL(origin).origin));
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (!allowed.has(url.origin)) throw new HostRefusedError(`${url.origin} is not the provider's origin (${[...allowed].join(', ')})`);
    return inner(input, init);
  }) as typeof fetch;
}
