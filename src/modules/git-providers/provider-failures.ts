import { HostRefusedError, HostUnresolvedError, ProviderTimeoutError, ResponseTooLargeError } from '@/common/net/host-guard';
import { ProviderFailure } from './git-provider.port';

interface HttpFailure {
  status: number;
  message: string;
  headers: Record<string, string | undefined>;
}

/**
 * A Retry-After header value in milliseconds: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`, relative to `now`); undefined when absent or unreadable. A
 * date in the past is 0.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** Seconds until a rate-limited provider takes requests again: Retry-After (seconds or a date), else x-ratelimit-reset. */
export function retryAfterSeconds(headers: Record<string, string | undefined>, now = Date.now()): number {
  const retryAfter = parseRetryAfter(headers['retry-after'], now);
  // `Retry-After: 0` (or a date past) from a provider a tenant controls must not make "at once" loops.
  if (retryAfter !== undefined) return Math.max(1, Math.ceil(retryAfter / 1000));
  const reset = Number(headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(1, Math.ceil(reset - now / 1000));
  return 60;
}

/** The most characters of a provider's own error text passed on to callers. */
export const MAX_REASON_LENGTH = 200;

/** A provider's error text as callers may see it: printable, one line, at most MAX_REASON_LENGTH characters. */
export function sanitizeReason(text: string): string {
  const flat = text
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length <= MAX_REASON_LENGTH ? flat : `${flat.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

/** Classifies an HTTP answer of a provider API (GitHub's and GitLab's conventions agree on these). */
export function classifyHttpFailure({ status, message, headers }: HttpFailure): ProviderFailure {
  const reason = sanitizeReason(typeof message === 'string' ? message : '') || `HTTP ${status}`;
  // GitHub's secondary rate limits are a 403 (or 429) that may come without either header, saying so in the message.
  if (
    status === 429 ||
    (status === 403 &&
      (headers['x-ratelimit-remaining'] === '0' || headers['retry-after'] !== undefined || /secondary rate limit|abuse detection/i.test(reason)))
  ) {
    return new ProviderFailure('rate_limited', reason, retryAfterSeconds(headers));
  }
  if (status === 401) return new ProviderFailure('unauthorized', reason);
  if (status === 403) return new ProviderFailure('forbidden', reason);
  if (status === 404) return new ProviderFailure('not_found', reason);
  // A 503 may say when to come back (Retry-After); callers that retry honour it.
  if (status >= 500) return new ProviderFailure('unavailable', reason, headers['retry-after'] !== undefined ? retryAfterSeconds(headers) : undefined);
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
