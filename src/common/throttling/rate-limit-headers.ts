import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';

export interface BudgetState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
  windowSeconds: number;
}

export function budgetState(limit: number, ttlMs: number, record: { totalHits: number; timeToExpire: number }): BudgetState {
  return { limit, remaining: Math.max(0, limit - record.totalHits), reset: record.timeToExpire, windowSeconds: Math.ceil(ttlMs / 1000) };
}

/** The IETF draft's RateLimit-* fields (draft-ietf-httpapi-ratelimit-headers), in seconds. */
export function rateLimitHeaders(state: BudgetState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.reset),
    'RateLimit-Policy': `${state.limit};w=${state.windowSeconds}`,
  };
}

/** The 429: the error body, Retry-After and the exhausted budget's RateLimit-* headers. */
export function rateLimited(name: string, limit: number, ttlMs: number, retryAfterSeconds: number): AppError {
  const retryAfter = Math.max(1, retryAfterSeconds);
  const windowSeconds = Math.ceil(ttlMs / 1000);
  return new AppError(RequestErrors.RATE_LIMITED, {
    message: `Rate limit exceeded (${limit} requests per ${windowSeconds} s); retry in ${retryAfter} s.`,
    metadata: { limit: name, retryAfterSeconds: retryAfter },
    headers: { 'Retry-After': String(retryAfter), ...rateLimitHeaders({ limit, remaining: 0, reset: retryAfter, windowSeconds }) },
  });
}
