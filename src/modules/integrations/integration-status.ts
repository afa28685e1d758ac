import type { IntegrationStatus } from '@/generated/prisma/enums';

/**
 * Integration status transitions, as data:
 * - INITIATED -> PENDING_CONFIRMATION (the callback exchanged the code) | FAILED (the provider
 *   reported an error, the exchange failed, or the installation is not one the user administers)
 * - PENDING_CONFIRMATION -> ACTIVE (the member who started it confirmed the connected account)
 * - ACTIVE -> NEEDS_ATTENTION (the provider refused the credentials when used or validated)
 * - NEEDS_ATTENTION -> ACTIVE (validation succeeded again)
 * - ACTIVE | NEEDS_ATTENTION -> REVOKED (the app installation is gone)
 */
export type IntegrationEvent = 'connected' | 'confirmed' | 'failed' | 'credentialsRefused' | 'validated' | 'installationGone';

const TRANSITIONS: Record<IntegrationEvent, Partial<Record<IntegrationStatus, IntegrationStatus>>> = {
  connected: { INITIATED: 'PENDING_CONFIRMATION' },
  confirmed: { PENDING_CONFIRMATION: 'ACTIVE' },
  failed: { INITIATED: 'FAILED' },
  credentialsRefused: { ACTIVE: 'NEEDS_ATTENTION', NEEDS_ATTENTION: 'NEEDS_ATTENTION' },
  validated: { ACTIVE: 'ACTIVE', NEEDS_ATTENTION: 'ACTIVE' },
  installationGone: { ACTIVE: 'REVOKED', NEEDS_ATTENTION: 'REVOKED' },
};

/** The status after `event`, or undefined when the event does not apply in `status`. */
export function nextStatus(status: IntegrationStatus, event: IntegrationEvent): IntegrationStatus | undefined {
  return TRANSITIONS[event][status];
}
