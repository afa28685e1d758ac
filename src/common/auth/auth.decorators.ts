import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from '@/common/errors/error-body';
import type { Principal, Role } from './principal';

export const IS_PUBLIC = 'auth:isPublic';
export const MINIMUM_ROLE = 'auth:minimumRole';

/** Opens a route to callers without a bearer token. Everything else is authenticated. */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiExtension('x-public', true));

/** The caller's role must be at least `role` (VIEWER < MEMBER < ADMIN < OWNER), else 403. */
export const RequireRole = (role: Role) =>
  applyDecorators(
    SetMetadata(MINIMUM_ROLE, role),
    ApiForbiddenResponse({ description: `Requires role ${role} or higher`, type: ErrorBodyDto }),
  );

export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<{ principal?: Principal }>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route the bearer guard did not authenticate');
  return principal;
});
