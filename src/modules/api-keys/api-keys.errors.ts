import { defineErrors } from '@/common/errors/error-catalogue';

export const ApiKeyErrors = defineErrors('ApiKey', {
  NOT_FOUND: [404, 'The API key does not exist.'],
  OWNER_NOT_FOUND: [422, 'The owner of the API key does not exist in this organization.'],
  EXPIRY_IN_PAST: [422, 'expiresAt must be in the future.'],
  EXPIRY_AFTER_CREATOR: [422, 'A key cannot outlive the key that creates it.'],
  NOT_ROTATABLE: [422, 'The API key is revoked or expired and cannot be rotated.'],
  SCOPE_NOT_HELD: [422, "A key's scopes must be permissions its owner's role holds."],
  SCOPE_BEYOND_CREATOR: [422, 'A key created by a scoped key must be scoped within the scopes of that key.'],
});
