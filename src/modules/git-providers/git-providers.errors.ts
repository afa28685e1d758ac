import { AppError } from '@/common/errors/app-error';
import { defineErrors } from '@/common/errors/error-catalogue';
import type { ProviderFailure } from './git-provider.port';
import { sanitizeReason } from './provider-failures';

export const GitProviderErrors = defineErrors('GitProvider', {
  REPOSITORY_NOT_FOUND: [404, 'The git provider has no such repository, or the integration cannot see it.'],
  CREDENTIALS_REJECTED: [422, 'The git provider refused the credentials.'],
  REQUEST_REJECTED: [422, 'The git provider refused the request.'],
  HOST_REFUSED: [422, 'The git server address is not allowed.'],
  HOST_UNRESOLVED: [422, 'The git server host name does not resolve.'],
  LOCAL_GIT_DISABLED: [422, 'LOCAL_GIT repositories are disabled on this server.'],
  NOT_CONFIGURED: [422, 'This provider flow is not configured on this server.'],
  INTEGRATION_NEEDS_ATTENTION: [424, "The git provider refused the integration's credentials; reconnect or validate the integration."],
  UNAVAILABLE: [502, 'The git provider could not be reached or answered with an error.'],
  TIMEOUT: [502, 'The git provider did not answer in time.'],
  RATE_LIMITED: [503, "The git provider's rate limit is exhausted; try again later."],
});

/** Every entry `providerError` can produce for a call with bound credentials, for @ApiErrors. */
export const PROVIDER_CALL_ERRORS = [
  GitProviderErrors.UNAVAILABLE,
  GitProviderErrors.TIMEOUT,
  GitProviderErrors.RATE_LIMITED,
  GitProviderErrors.REQUEST_REJECTED,
  GitProviderErrors.HOST_REFUSED,
  GitProviderErrors.HOST_UNRESOLVED,
];

/**
 * The API's answer to a failed provider call. `credentials`: what a refusal of the credentials
 * means here: a 422 while they are being checked, a 424 (needs attention) when in use.
 */
export function providerError(given: ProviderFailure, credentials: 'checking' | 'in-use'): AppError {
  // Whatever produced the failure, the provider's text reaches callers short and printable only.
  const failure = { kind: given.kind, reason: sanitizeReason(given.reason), retryAfterSeconds: given.retryAfterSeconds };
  const metadata = { providerReason: failure.reason };
  switch (failure.kind) {
    case 'unauthorized':
    case 'forbidden':
      return new AppError(credentials === 'checking' ? GitProviderErrors.CREDENTIALS_REJECTED : GitProviderErrors.INTEGRATION_NEEDS_ATTENTION, {
        message: `The git provider refused the credentials: ${failure.reason}`,
        metadata,
      });
    case 'not_found':
      return new AppError(GitProviderErrors.REPOSITORY_NOT_FOUND, { metadata });
    case 'rate_limited':
      return new AppError(GitProviderErrors.RATE_LIMITED, {
        metadata: { ...metadata, retryAfterSeconds: failure.retryAfterSeconds },
        headers: { 'Retry-After': String(failure.retryAfterSeconds ?? 60) },
      });
    case 'timeout':
      return new AppError(GitProviderErrors.TIMEOUT, { metadata });
    case 'refused':
      return new AppError(GitProviderErrors.HOST_REFUSED, { message: `The git server address is not allowed: ${failure.reason}`, metadata });
    case 'unresolved':
      return new AppError(GitProviderErrors.HOST_UNRESOLVED, { message: `The git server host name does not resolve: ${failure.reason}`, metadata });
    case 'rejected':
      return new AppError(GitProviderErrors.REQUEST_REJECTED, { message: `The git provider refused the request: ${failure.reason}`, metadata });
    default:
      return new AppError(GitProviderErrors.UNAVAILABLE, { metadata });
  }
}
