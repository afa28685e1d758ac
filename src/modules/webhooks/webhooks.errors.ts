import { defineErrors } from '@/common/errors/error-catalogue';

export const WebhookErrors = defineErrors('Webhook', {
  SIGNATURE_INVALID: [401, 'The delivery is not signed with the webhook secret of an integration it belongs to (X-Hub-Signature-256); nothing was changed.'],
  HEADER_MISSING: [400, 'A GitHub delivery header is missing or malformed (X-GitHub-Event, X-GitHub-Delivery).'],
  INTEGRATION_URL_REQUIRED: [
    401,
    "The delivery could belong to more integrations than the shared URL verifies at once; deliver it to POST /webhooks/github?integration=<the integration's id> (or sign it with the GitHub App's secret). Nothing was changed.",
  ],
  DELIVERY_EXPIRED: [
    422,
    "The delivery's own timestamp is older than GitHub lets a delivery be redelivered (3 days on github.com, 7 on GitHub Enterprise Server): it can only be a replay. Nothing was changed.",
  ],
  BUDGET_EXCEEDED: [
    429,
    'The organization has spent its webhook delivery budget (deliveries per minute, or deliveries stored and not yet applied); nothing was stored. Redeliver it after Retry-After.',
  ],
});
