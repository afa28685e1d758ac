import { AppError } from '@/common/errors/app-error';
import { AuthErrors } from '@/common/errors/common.errors';
import { roleAtLeast, type Principal, type Role } from './principal';

/** Nobody grants a role above their own: not to a new member, a service account, or by a role change. */
export function assertMayGrant(principal: Principal, role: Role): void {
  if (!roleAtLeast(principal.role, role)) {
    throw new AppError(AuthErrors.FORBIDDEN, {
      message: `Your role ${principal.role} cannot grant the role ${role}.`,
      metadata: { role, callerRole: principal.role },
    });
  }
}

/** Nobody manages (changes, removes, reads or revokes the keys of) an identity whose role is above their own. */
export function assertMayManage(principal: Principal, target: { role: Role }, what: string): void {
  if (!roleAtLeast(principal.role, target.role)) {
    throw new AppError(AuthErrors.FORBIDDEN, {
      message: `Your role ${principal.role} cannot manage ${what} with the role ${target.role}.`,
      metadata: { targetRole: target.role, callerRole: principal.role },
    });
  }
}

/**
 * Whether the caller may mint a token (create or rotate a key) that acts as `owner`, beyond the
 * rules above (apiKeys:manageOthers, an owner not above the caller). A member's key acts as that
 * person: its requests and audit entries are theirs. Among administrators that is impersonation, so
 * only the member themself or an OWNER mints a token for a member who is an ADMIN or OWNER; an
 * ADMIN mints for MEMBER and VIEWER members. Service accounts belong to the organization, not to a
 * person (an ADMIN may create an ADMIN one anyway), so the role rule alone applies to them.
 */
export function mayMintTokenFor(caller: { actorId: string; role: Role }, owner: { id: string; type: 'MEMBERSHIP' | 'SERVICE_ACCOUNT'; role: Role }): boolean {
  if (owner.id === caller.actorId || owner.type !== 'MEMBERSHIP') return true;
  return !roleAtLeast(owner.role, 'ADMIN') || caller.role === 'OWNER';
}
