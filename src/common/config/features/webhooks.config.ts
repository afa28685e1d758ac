import { ConfigError, feature, int, pattern } from '../variables';

const DAY_MS = 86_400_000;
const SECRET = /^\S{16,256}$/;
const SECRET_RULE = 'must be 16 to 256 characters without spaces';

/** Provider webhook deliveries: stored by the API, applied by the worker, swept and purged periodically. */
export const webhooksConfig = feature(
  'Webhooks',
  {
    GITHUB_APP_WEBHOOK_SECRET: pattern(SECRET, SECRET_RULE, {
      doc: "the GitHub App's one webhook secret (the App's settings, Webhook secret): every installation's deliveries to `POST /webhooks/github` are verified with it, whichever organization connected the installation; never logged. Unset, installation deliveries verify only against an integration's own secret (one organization per App)",
      comment: [
        "The GitHub App's webhook secret (all installations' deliveries); never logged. While rotating, the old one in",
        'GITHUB_APP_WEBHOOK_SECRET_PREVIOUS until GitHub sends with the new one (docs/webhooks.md).',
      ].join('\n'),
    }),
    GITHUB_APP_WEBHOOK_SECRET_PREVIOUS: pattern(SECRET, SECRET_RULE, {
      doc: "while rotating the App's webhook secret: the previous one, still accepted beside `GITHUB_APP_WEBHOOK_SECRET` (set the new secret here first, then on GitHub, then drop this); needs `GITHUB_APP_WEBHOOK_SECRET`",
    }),
    WEBHOOK_BODY_MAX_BYTES: int({
      min: 1_048_576,
      max: 26_214_400,
      default: 26_214_400,
      doc: 'the largest body `POST /webhooks/github` reads (GitHub caps a delivery at 25 MB; more is `413`); the global 1 MB limit and `BODY_MAX_KEYS` do not apply to this route',
    }),
    WEBHOOK_BODY_MAX_KEYS: int({
      min: 1_000,
      max: 5_000_000,
      default: 1_000_000,
      doc: 'object keys plus array items in a verified webhook body, counted on the raw bytes before it is parsed (a 2,000-commit push is about 60,000); more is `413`',
    }),
    WEBHOOK_ORG_DELIVERIES_PER_MINUTE: int({
      min: 1,
      max: 1_000_000,
      default: 1_200,
      doc: 'deliveries one organization may have stored per minute, counted in Redis across every API process; more is `429 dpa:Webhook:BUDGET_EXCEEDED` with `Retry-After` (GitHub records the failure; redeliver it later)',
    }),
    WEBHOOK_ORG_PENDING_MAX: int({
      min: 1,
      max: 1_000_000,
      default: 1_000,
      doc: 'deliveries one organization may have stored and not yet applied (payload kept); more is `429 dpa:Webhook:BUDGET_EXCEEDED` until the worker catches up',
    }),
    WEBHOOK_SWEEP_INTERVAL_MS: int({
      min: 1_000,
      max: 86_400_000,
      default: 60_000,
      doc: 'how often a worker hands GitHub webhook deliveries stored over a minute ago and never applied (their job lost with Redis) to the worker again, and deletes applied ones older than `WEBHOOK_DELIVERY_RETENTION_MS`; one worker runs each sweep',
    }),
    // A delivery older than its redelivery window (3 days on github.com, 7 on GitHub Enterprise Server)
    // is refused; its id must be kept longer than that, or a replay after the purge would be applied.
    WEBHOOK_DELIVERY_RETENTION_MS: int({
      min: 8 * DAY_MS,
      max: 365 * DAY_MS,
      default: 30 * DAY_MS,
      doc: 'how long the id of an applied webhook delivery is kept (its payload is dropped once applied) before the sweep deletes it; at least 8 days, longer than any delivery is accepted (3 days on github.com, 7 on GitHub Enterprise Server, by the timestamp in its payload), so a replayed delivery always finds its id or is too old',
    }),
  },
  (v) => {
    if (v.GITHUB_APP_WEBHOOK_SECRET_PREVIOUS !== undefined && v.GITHUB_APP_WEBHOOK_SECRET === undefined)
      throw new ConfigError('Invalid configuration: GITHUB_APP_WEBHOOK_SECRET_PREVIOUS needs GITHUB_APP_WEBHOOK_SECRET (the new secret)');
    return {
      webhooks: {
        sweepIntervalMs: v.WEBHOOK_SWEEP_INTERVAL_MS,
        deliveryRetentionMs: v.WEBHOOK_DELIVERY_RETENTION_MS,
        /** The GitHub App's webhook secrets, current first; empty without an app secret. Never logged. */
        appSecrets: [v.GITHUB_APP_WEBHOOK_SECRET, v.GITHUB_APP_WEBHOOK_SECRET_PREVIOUS].filter((s): s is string => s !== undefined),
        bodyMaxBytes: v.WEBHOOK_BODY_MAX_BYTES,
        bodyMaxKeys: v.WEBHOOK_BODY_MAX_KEYS,
        orgDeliveriesPerMinute: v.WEBHOOK_ORG_DELIVERIES_PER_MINUTE,
        orgPendingMax: v.WEBHOOK_ORG_PENDING_MAX,
      },
    };
  },
);
