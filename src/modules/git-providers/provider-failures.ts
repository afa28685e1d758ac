import { HostRefusedError, HostUnresolvedError, ProviderTimeoutError } from '@/common/net/host-guard';
import { ProviderFailure } from './git-provider.port';

interface HttpFailure {
  status: number;
  message: string;
  headers: Record<string, string | undefined>;
}

/** Seconds until a rate-limited provider takes requests again: Retry-After, else x-ratelimit-reset. */
export function retryAfterSeconds(headers: Record<string, string | undefined>, now = Date.now()): number {
  const retryAfter = Number(headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return Math.ceil(retryAfter);
  const reset = Number(headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - now / 1000));
  return 60;
}

/** Classifies an HTTP answer of a provider API (GitHub's and GitLab's conventions agree on these). */
export function classifyHttpFailure({ status, message, headers }: HttpFailure): ProviderFailure {
  const reason = message || `HTTP ${status}`;
  if (status === 429 || (status === 403 && (headers['x-ratelimit-remaining'] === '0' || headers['retry-after'] !== undefined))) {
    return new ProviderFailure('rate_limited', reason, retryAfterSeconds(headers));
  }
  if (status === 401) return new ProviderFailure('unauthorized', reason);
  if (status === 403) return new ProviderFailure('forbidden', reason);
  if (status === 404) return new ProviderFailure('not_found', reason);
  if (status >= 500) return new ProviderFailure('unavailable', reason);
  return new ProviderFailure('rejected', reason);
}

/** Classifies a failure to get any answer: the connection guard, DNS, timeout, or the network. */
export function classifyTransportFailure(error: unknown): ProviderFailure {
  const seen = new Set<unknown>();
  for (let current = error; current && typeof current === 'object' && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current);
    if (current instanceof ProviderFailure) return current;
    if (current instanceof HostRefusedError) return new ProviderFailure('refused', current.reason);
    if (current instanceof HostUnresolvedError) return new ProviderFailure('unresolved', current.message);
    if (current instanceof ProviderTimeoutError) return new ProviderFailure('timeout', current.message);
    const code = (current as { code?: unknown }).code;
    if (code === 'EHOSTREFUSED') return new ProviderFailure('refused', (current as { reason?: string }).reason ?? 'refused by the outgoing request policy');
  }
  const code = (error as { code?: unknown; cause?: { code?: unknown } })?.cause?.code ?? (error as { code?: unknown })?.code;
  return new ProviderFailure('unavailable', typeof code === 'string' ? `the provider could not be reached (${code})` : 'the provider could not be reached');
}
