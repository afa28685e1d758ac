import { feature, flag, int } from '../variables';

const budget = (defaultValue: number, doc: string, comment?: string) => int({ min: 1, max: 10_000_000, default: defaultValue, doc, comment });

/** Budgets shared by every API process through Redis, each per window of RATE_LIMIT_WINDOW_MS. */
export const rateLimitsConfig = feature(
  'Rate limits',
  {
    RATE_LIMIT_WINDOW_MS: int({
      min: 1000,
      max: 86_400_000,
      default: 60_000,
      doc: 'the window every rate-limit budget is counted over (see [Rate limits](api-conventions.md#rate-limits))',
    }),
    RATE_LIMIT_PER_PRINCIPAL: budget(600, 'requests per window per API key, on any route'),
    RATE_LIMIT_PER_ACTOR: int({
      min: 1,
      max: 10_000_000,
      shown: '`RATE_LIMIT_PER_PRINCIPAL`',
      doc: 'requests per window per member or service account, all its API keys together (minting keys does not multiply the budget)',
      comment: 'per member or service account, over all of its keys (empty: RATE_LIMIT_PER_PRINCIPAL)',
    }),
    RATE_LIMIT_PER_ORGANIZATION: budget(
      6_000,
      'requests per window per organization, every member, service account and key of it together, beside the per-key and per-actor budgets: creating members or service accounts does not multiply what one organization may send',
      'per organization, over all its members, service accounts and keys',
    ),
    RATE_LIMIT_LOCAL_PRE_COUNT: flag({
      default: true,
      doc: 'A hit on a budget with more than a tenth of it (at least 20 requests) left, read from Redis within the last 200 ms, is counted in the process and added to Redis within 50 ms, in one round trip for all budgets; near the limit every hit asks Redis. Exact unless other processes spend more than that headroom on one budget within 200 ms. `false`: every hit asks Redis',
      comment: 'count hits on budgets far from spent in the process, added to Redis every 50 ms (false: every hit asks Redis)',
    }),
    RATE_LIMIT_LOCAL_PRE_COUNT_FRESH_MS: int({
      min: 10,
      max: 10_000,
      default: 200,
      doc: "how old a reading of a budget from Redis may be for the pre-count to decide a hit locally; the longer, the fewer round trips and the wider the tolerance above (other processes' hits within this time)",
    }),
    RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS: budget(60, 'requests per window per client address without a valid key: failed authentications and public routes'),
    RATE_LIMIT_UNAUTHENTICATED_PER_IPV6_48: budget(
      600,
      'requests per window without a valid key from one IPv6 /48, beside the per-address budget (which counts an IPv6 caller per /64): a network with a /48 holds 65,536 /64s, and this bounds them together. IPv4 callers are counted per address only',
      'unauthenticated requests per IPv6 /48, beside the per-/64 budget',
    ),
    RATE_LIMIT_KEY_CREATION: budget(
      10,
      '`POST /api-keys` and `POST /api-keys/{id}/rotate` per window per member or service account, all its keys together (on top of the per-key budget)',
    ),
    RATE_LIMIT_REPORTS: budget(10, '`POST /reports` per window per member or service account, all its keys together (on top of the per-key budget)'),
    RATE_LIMIT_OAUTH_CALLBACK: budget(
      30,
      '`GET /scm/callback` and `GET /scm/authorize` (each) per window per client address (on top of the per-address budget)',
    ),
    RATE_LIMIT_USAGE_IMPORT: budget(10, '`POST /scm/actions/usage/import` per window per organization (every key of the organization shares it)'),
    RATE_LIMIT_WEBHOOKS: budget(
      1_200,
      '`POST /webhooks/github` per window per client address, instead of the unauthenticated budget (GitHub delivers from a few addresses)',
      'POST /webhooks/github per client address (GitHub delivers from a few addresses)',
    ),
    RATE_LIMIT_HEALTH_READY: budget(
      300,
      '`GET /health/ready` per window per client address, instead of the unauthenticated budget (probes come often from a few addresses; the answer is cached for a second in each process anyway)',
      'GET /health/ready per client address (probes come often from a few addresses)',
    ),
  },
  (v) => ({
    rateLimits: {
      windowMs: v.RATE_LIMIT_WINDOW_MS,
      perPrincipal: v.RATE_LIMIT_PER_PRINCIPAL,
      /** Every key of one member or service account together: minting keys does not multiply the budget. */
      perActor: v.RATE_LIMIT_PER_ACTOR ?? v.RATE_LIMIT_PER_PRINCIPAL,
      /** Count hits on budgets far from spent in the process, added to Redis in batches (local-pre-count.ts). */
      localPreCount: v.RATE_LIMIT_LOCAL_PRE_COUNT,
      localPreCountFreshMs: v.RATE_LIMIT_LOCAL_PRE_COUNT_FRESH_MS,
      unauthenticatedPerAddress: v.RATE_LIMIT_UNAUTHENTICATED_PER_ADDRESS,
      /** Every /64 of one IPv6 /48 together (the address budget counts IPv6 per /64). */
      unauthenticatedPerNetwork: v.RATE_LIMIT_UNAUTHENTICATED_PER_IPV6_48,
      /** Every member, service account and key of one organization together. */
      perOrganization: v.RATE_LIMIT_PER_ORGANIZATION,
      keyCreation: v.RATE_LIMIT_KEY_CREATION,
      reports: v.RATE_LIMIT_REPORTS,
      oauthCallback: v.RATE_LIMIT_OAUTH_CALLBACK,
      usageImport: v.RATE_LIMIT_USAGE_IMPORT,
      webhooks: v.RATE_LIMIT_WEBHOOKS,
      healthReady: v.RATE_LIMIT_HEALTH_READY,
    },
  }),
);
