import { HostRefusedError, HostUnresolvedError, ProviderTimeoutError, ResponseTooLargeError } from '@/common/net/host-guard';
import { ProviderFailure } from './git-provider.port';

interface HttpFailure {
  status: number;
  message: string;
  headers: Record<string, string | undefined>;
}

/** Seconds until a rate-limited provider takes requests again: Retry-After, else x-ratelimit-reset. */
export function retryAfterSeconds(headers: Record<string, string | undefined>, now = Date.now()): number {
  const retryAfter = Number(headers['retry-after']);
  // `Retry-After: 0` (or a negative value) from a provider a tenant controls must not make "at once" loops.
  if (Number.isFinite(retryAfter)) return Math.max(1, Math.ceil(retryAfter));
  const reset = Number(headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - now / 1000));
  return 60;
}

/** The most characters of a provider's own error text passed on to callers. */
export const MAX_REASON_LENGTH = 200;

/** A provider's error text as callers may see it: printable, one line, at most MAX_REASON_LENGTH characters. */
export function sanitizeReason(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_REASON_LENGTH ? flat : `${flat.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

/** Classifies an HTTP answer of a provider API (GitHub's and GitLab's conventions agree on these). */
export function classifyHttpFailure({ status, message, headers }: HttpFailure): ProviderFailure {
  const reason = sanitizeReason(typeof message === 'string' ? message : '') || `HTTP ${status}`;
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
    if (current instanceof ResponseTooLargeError) return new ProviderFailure('unavailable', current.message);
    const code = (current as { code?: unknown }).code;
    if (code === 'EHOSTREFUSED') return new ProviderFailure('refused', (current as { reason?: string }).reason ?? 'refused by the outgoing request policy');
  }
  const code = (error as { code?: unknown; cause?: { code?: unknown } })?.cause?.code ?? (error as { code?: unknown })?.code;
  return new ProviderFailure('unavailable', typeof code === 'string' ? `the provider could not be reached (${code})` : 'the provider could not be reached');
}
