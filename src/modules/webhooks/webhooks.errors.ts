import { defineErrors } from '@/common/errors/error-catalogue';

export const WebhookErrors = defineErrors('Webhook', {
  SIGNATURE_INVALID: [401, 'The delivery is not signed with the webhook secret of an integration it belongs to (X-Hub-Signature-256); nothing was changed.'],
  HEADER_MISSING: [400, 'A GitHub delivery header is missing or malformed (X-GitHub-Event, X-GitHub-Delivery).'],
});
