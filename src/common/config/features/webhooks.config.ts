import { feature, int } from '../variables';

const DAY_MS = 86_400_000;

/** Provider webhook deliveries: stored by the API, applied by the worker, swept and purged periodically. */
export const webhooksConfig = feature(
  'Webhooks',
  {
    WEBHOOK_SWEEP_INTERVAL_MS: int({
      min: 1_000,
      max: 86_400_000,
      default: 60_000,
      doc: 'how often a worker hands GitHub webhook deliveries stored over a minute ago and never applied (their job lost with Redis) to the worker again, and deletes applied ones older than `WEBHOOK_DELIVERY_RETENTION_MS`; one worker runs each sweep',
    }),
    // GitHub lets a delivery be redelivered within 3 days: a shorter retention would apply a redelivery twice.
    WEBHOOK_DELIVERY_RETENTION_MS: int({
      min: 3 * DAY_MS,
      max: 365 * DAY_MS,
      default: 30 * DAY_MS,
      doc: 'how long an applied webhook delivery is kept before the sweep deletes it; at least 3 days, within which GitHub may redeliver it, so a redelivery always finds its row and is applied once',
    }),
  },
  (v) => ({ webhooks: { sweepIntervalMs: v.WEBHOOK_SWEEP_INTERVAL_MS, deliveryRetentionMs: v.WEBHOOK_DELIVERY_RETENTION_MS } }),
);
