import { defineErrors } from '@/common/errors/error-catalogue';

export const IntegrationErrors = defineErrors('Integration', {
  NOT_FOUND: [404, 'The integration does not exist.'],
  GIVEN_ID_TAKEN: [409, 'An integration with this givenId already exists in the organization.'],
  IN_USE: [409, 'Code sources use this integration; delete them first.'],
  NOT_CONNECTED: [409, 'The integration has no credentials yet: finish its authorization first.'],
  TOKEN_REQUIRED: [422, 'authMethod API_TOKEN needs a token.'],
  SERVER_REQUIRED: [422, 'This provider needs the self-hosted git server the account lives on (gitServerId).'],
  SERVER_MISMATCH: [422, 'The git server does not exist in this organization or runs another provider.'],
  REDIRECT_NOT_ALLOWED: [422, 'redirectUrl must be a path on this site or an allowed origin.'],
  NOT_PENDING_CONFIRMATION: [409, 'The integration is not waiting for confirmation (only an authorized OAUTH / APP_INSTALLATION connection is).'],
  CONFIRMATION_NOT_YOURS: [403, 'Only the member who started this connection can confirm it.'],
  CONFIRMATION_EXPIRED: [410, 'The confirmation window (1 hour after the provider authorized) has passed: delete the integration and connect again.'],
  CONFIRMATION_MISMATCH: [422, 'The account or the confirmation code does not match this connection.'],
  WEBHOOKS_NOT_SUPPORTED: [422, 'Webhooks are received from GitHub (GITHUB, GITHUB_ENTERPRISE) integrations only.'],
});

export const OAuthErrors = defineErrors('OAuth', {
  INVALID_STATE: [400, 'The authorization state is missing or identifies no authorization flow.'],
  LINK_USED: [410, 'This authorization link was already opened or has expired (links are valid once, for 10 minutes): start the connection again.'],
});
