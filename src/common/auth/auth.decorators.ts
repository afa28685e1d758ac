import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { type Permission, rolesHolding } from './permissions';
import type { Principal } from './principal';

export const IS_PUBLIC = 'auth:isPublic';
export const REQUIRED_PERMISSION = 'auth:requiredPermission';
export const SUPERADMIN_ONLY = 'auth:superadminOnly';
/** What `x-required-permission` says on a route only superadmins may call. */
export const SUPERADMIN_PERMISSION = 'platform:superadmin';

/** Opens a route to callers without a bearer token. Everything else is authenticated. */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiExtension('x-public', true));

/**
 * The route's floor: the caller's role must hold `permission` (see the table in permissions.ts),
 * else 403 with `metadata.permission`. Also writes the requirement into the OpenAPI operation.
 */
export const RequirePermission = (permission: Permission) =>
  applyDecorators(
    SetMetadata(REQUIRED_PERMISSION, permission),
    ApiExtension('x-required-permission', permission),
    ApiForbiddenResponse({ description: `Requires the permission \`${permission}\` (roles ${rolesHolding(permission).join(', ')})`, type: ErrorBodyDto }),
  );

/** Platform operations: only superadmins (a flag set through the CLI), whatever their role. */
export const RequireSuperadmin = () =>
  applyDecorators(
    SetMetadata(SUPERADMIN_ONLY, true),
    ApiExtension('x-required-permission', SUPERADMIN_PERMISSION),
    ApiForbiddenResponse({ description: 'Only superadmins', type: ErrorBodyDto }),
  );

export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<{ principal?: Principal }>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route the bearer guard did not authenticate');
  return principal;
});
