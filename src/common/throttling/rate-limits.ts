/**
 * The rate-limit policy as data: which budgets exist, what each counts, and how they are described
 * to callers (docs/api-conventions.md, OpenAPI). No Nest or Redis here.
 */
import type { AppConfig } from '@/common/config/app-config';

/**
 * Budgets every request may be counted against; the guard picks by whether a principal is known.
 * An authenticated request counts against its API key, the key's actor (the member or service
 * account behind it) and its organization, so minting more keys does not multiply what one actor
 * may send, nor creating members or service accounts what one organization may send. A request
 * without a valid key counts against its client address (IPv6: its /64) and, for IPv6, its /48.
 */
export const BASE_RATE_LIMITS = ['principal', 'actor', 'organization', 'address', 'network'] as const;

/** Tighter budgets a route opts into with `@RateLimit(name)`, per actor (member or service account, whichever of its keys), organization or client address, on top of its base budget. */
export const NAMED_RATE_LIMITS = {
  // Per actor: a budget per key would let each new key mint more keys.
  keyCreation: {
    what: 'creating and rotating API keys and integration webhook secrets',
    per: 'actor',
    limit: (config: AppConfig) => config.rateLimits.keyCreation,
  },
  reports: { what: 'sending bug reports', per: 'actor', limit: (config: AppConfig) => config.rateLimits.reports },
  oauthCallback: {
    what: 'the git provider OAuth start (GET /scm/authorize) and callback (GET /scm/callback), each',
    per: 'address',
    limit: (config: AppConfig) => config.rateLimits.oauthCallback,
  },
  // Every key of an organization shares it: an import starts work for the whole organization.
  usageImport: { what: 'starting CI usage imports', per: 'organization', limit: (config: AppConfig) => config.rateLimits.usageImport },
  // Per address: deliveries carry no key, and GitHub sends them from a few addresses.
  // Instead of the address budget of unauthenticated callers, not on top of it.
  webhooks: {
    what: 'provider webhook deliveries (POST /webhooks/github), instead of the unauthenticated budget',
    per: 'address',
    limit: (config: AppConfig) => config.rateLimits.webhooks,
    replacesAddressBudget: true,
  },
  // Public and probed often from a few addresses (a balancer's, a node's): a budget of its own, instead of the address budget.
  healthReady: {
    what: 'readiness probes (GET /health/ready), instead of the unauthenticated budget',
    per: 'address',
    limit: (config: AppConfig) => config.rateLimits.healthReady,
    replacesAddressBudget: true,
  },
} as const;

const PER_LABEL = {
  principal: 'API key',
  actor: 'member or service account (all its keys together)',
  organization: 'organization',
  address: 'client address',
} as const;

export type NamedRateLimit = keyof typeof NAMED_RATE_LIMITS;
export type RateLimitName = (typeof BASE_RATE_LIMITS)[number] | NamedRateLimit;

export function isNamedRateLimit(name: string): name is NamedRateLimit {
  return Object.hasOwn(NAMED_RATE_LIMITS, name);
}

export function limitOf(name: RateLimitName, config: AppConfig): number {
  if (name === 'principal') return config.rateLimits.perPrincipal;
  if (name === 'actor') return config.rateLimits.perActor;
  if (name === 'organization') return config.rateLimits.perOrganization;
  if (name === 'address') return config.rateLimits.unauthenticatedPerAddress;
  if (name === 'network') return config.rateLimits.unauthenticatedPerNetwork;
  return NAMED_RATE_LIMITS[name].limit(config);
}

/** The Redis key (before the storage's `{…:<name>}:hits` wrapping) of one caller's counters. */
export function rateLimitKey(prefix: string, tracker: string): string {
  return `${prefix}:rate-limit:${tracker}`;
}

/** Where an address (or IPv6 /48) that spent its unauthenticated budget is marked blocked, read before authenticating. */
export function addressBlockKey(prefix: string, tracker: string): string {
  return `${rateLimitKey(prefix, tracker)}:auth-blocked`;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** A Markdown paragraph stating the configured limits, for the OpenAPI document's description. */
export function describeRateLimits(config: AppConfig): string {
  const window = seconds(config.rateLimits.windowMs);
  const named = Object.entries(NAMED_RATE_LIMITS)
    .map(([name, spec]) => `\`${name}\` (${spec.what}): ${spec.limit(config)} per ${window} per ${PER_LABEL[spec.per]}`)
    .join('; ');
  return [
    `**Rate limits.** Budgets are shared by every API process (counted in Redis) over fixed windows of ${window}.`,
    `Each API key may make ${config.rateLimits.perPrincipal} requests per window, and all the keys of one member or service account together ${config.rateLimits.perActor}, and all the members and service accounts of one organization together ${config.rateLimits.perOrganization}.`,
    `Requests without a valid key (a missing, malformed, unknown, expired or revoked token, and public routes) count ${config.rateLimits.unauthenticatedPerAddress} per window per client address (IPv6: per /64), and ${config.rateLimits.unauthenticatedPerNetwork} per IPv6 /48;`,
    'an address over that budget cannot have a token looked up until its block ends (keys a process has already verified are still served), so a flood of bad tokens costs no database lookups.',
    `Named limits, on top: ${named}.`,
    'Over a budget the caller is refused for one window: `429` with the error body (`dpa:Request:RATE_LIMITED`) and `Retry-After` in seconds.',
    'Limited responses carry `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (seconds) and `RateLimit-Policy` for the budget closest to running out.',
    ...(config.rateLimits.localPreCount
      ? ['A process may count a hit on a budget far from spent itself and add it to Redis within 50 ms; near the limit every hit is counted in Redis at once.']
      : []),
    'If Redis is unreachable, requests are not limited (fail open) rather than refused.',
  ].join(' ');
}
