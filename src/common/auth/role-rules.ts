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
