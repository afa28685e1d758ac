import type { ManagedDomainStatus } from '@/generated/prisma/enums';

/** The registration of the exact apex asked about, as the rules need it. */
export interface RegistrationFacts {
  organizationId: string;
  status: ManagedDomainStatus;
  /** The caller's organization holds a grant on it. */
  grantedToCaller: boolean;
}

/** The nearest ACTIVE apex strictly above the name, if any. */
export interface ActiveAncestorFacts {
  organizationId: string;
  grantedToCaller: boolean;
}

export interface ApexStatusDecision {
  /** The apex is registered and ACTIVE: its wildcard is live and managed by the service. */
  exists: boolean;
  /** The owning organization's id, or '' when nobody visible to the caller owns the apex. */
  owner: string;
  /** The caller's organization may create names under the apex. */
  authorized: boolean;
  /** The registration is visible to the caller: its dependents are counted. */
  visible: boolean;
  /** The caller may read the dependents' hostnames (it owns the apex or may nest under it by grant). */
  showsDependents: boolean;
}

/** At most this many dependents' hostnames are listed; `dependentCount` is always exact. */
export const MAX_LISTED_DEPENDENTS = 100;

/** Returned as `owner` when nobody owns the apex, or its owner is hidden from the caller. */
export const NO_OWNER = '';

/**
 * Whether the caller's organization may register a name under a live apex of someone else: only
 * the nearest ACTIVE apex above decides (delegation: once an owner granted an organization a sub-
 * apex and it went live, that organization decides who nests under it). PENDING and LAPSED apexes
 * restrict nothing.
 */
export function mayNestUnder(callerOrganizationId: string, above: ActiveAncestorFacts | undefined): boolean {
  return !above || above.organizationId === callerOrganizationId || above.grantedToCaller;
}

/**
 * The apex status rules (docs/domains.md has them as a table). Another organization's registration
 * is visible only while ACTIVE (a live wildcard is public anyway: its TXT record is in DNS); a
 * PENDING or LAPSED one of another organization reads as unregistered, so that the endpoint cannot
 * be used to find out what someone is about to register. The caller's own registrations are
 * visible in every status.
 */
export function decideApexStatus(
  callerOrganizationId: string,
  registration: RegistrationFacts | undefined,
  above: ActiveAncestorFacts | undefined,
): ApexStatusDecision {
  const own = registration !== undefined && registration.organizationId === callerOrganizationId;
  const exists = registration?.status === 'ACTIVE';
  const visible = own || exists;
  let authorized: boolean;
  if (own) authorized = true;
  else if (exists) authorized = registration.grantedToCaller;
  else authorized = mayNestUnder(callerOrganizationId, above);
  return {
    exists,
    owner: visible ? registration!.organizationId : NO_OWNER,
    authorized,
    visible,
    showsDependents: own || (exists && registration.grantedToCaller),
  };
}
