import type { MetricsService, ProviderCallOutcome } from './metrics.service';

/** The outcome label of a provider's answer (bounded, whatever the status). */
export function providerCallOutcome(status: number, headers: Headers): ProviderCallOutcome {
  if (status === 429 || (status === 403 && (headers.get('x-ratelimit-remaining') === '0' || headers.has('retry-after')))) return 'rate_limited';
  if (status >= 500) return 'server_error';
  if (status >= 400) return 'client_error';
  return 'ok';
}

/**
 * A fetch that counts each request in dpa_provider_calls_total{provider, outcome} and keeps the
 * rate-limit budget the provider announced (x-ratelimit-remaining, GitHub's and GitLab's header)
 * in dpa_provider_rate_limit_remaining{provider}. `provider` names the provider kind of a URL.
 */
export function meteredFetch(inner: typeof fetch, provider: (url: string) => string, metrics: MetricsService): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const kind = provider(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      metrics.providerCalls.inc({ provider: kind, outcome: 'transport_error' });
      throw error;
    }
    metrics.providerCalls.inc({ provider: kind, outcome: providerCallOutcome(response.status, response.headers) });
    const remaining = Number(response.headers.get('x-ratelimit-remaining') ?? response.headers.get('ratelimit-remaining') ?? NaN);
    if (Number.isFinite(remaining)) metrics.providerRateLimitRemaining.set({ provider: kind }, remaining);
    return response;
  }) as typeof fetch;
}
