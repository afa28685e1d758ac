import { defineErrors } from '@/common/errors/error-catalogue';

export const DomainErrors = defineErrors('Domain', {
  NOT_FOUND: [404, 'The domain does not exist.'],
  APEX_TAKEN: [409, 'The apex is already registered.'],
  REGISTRATION_EXPIRED: [422, 'The registration stayed unverified past DOMAIN_PENDING_TTL_MS and has expired; register the apex again.'],
  NESTING_NOT_GRANTED: [403, 'The apex is under a live apex of another organization that has not granted yours the right to nest under it.'],
  VERIFICATION_RECORD_NOT_FOUND: [422, 'The verification TXT record was not found with the expected value.'],
  HAS_DEPENDENTS: [409, 'The domain still has dependents; remove them first.'],
});

export const DomainGrantErrors = defineErrors('DomainGrant', {
  NOT_FOUND: [404, 'The organization holds no grant on this domain.'],
  ALREADY_GRANTED: [409, 'The organization already holds a grant on this domain.'],
  ORGANIZATION_NOT_FOUND: [422, 'The organization does not exist.'],
  OWN_ORGANIZATION: [422, 'Your own organization needs no grant on its domains.'],
});

export const DomainDependentErrors = defineErrors('DomainDependent', {
  NOT_FOUND: [404, 'The dependent does not exist.'],
  NOT_UNDER_APEX: [422, 'The hostname does not lie under the apex.'],
  HOSTNAME_TAKEN: [409, 'The hostname is already a dependent of this domain.'],
});
