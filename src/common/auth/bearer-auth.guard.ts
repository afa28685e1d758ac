import { CanActivate, ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError } from '@/common/errors/app-error';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { IS_PUBLIC, REQUIRED_PERMISSION, SUPERADMIN_ONLY, SUPERADMIN_PERMISSION } from './auth.decorators';
import { hasPermission, Permission } from './permissions';
import type { Principal } from './principal';
import { AuthErrors } from '@/common/errors/common.errors';
import { AuthAttemptLimiter } from '@/common/throttling/auth-attempt-limiter';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Deny by default: every route needs a valid bearer token unless marked @Public(). */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    // Absent only where nothing is served over HTTP (the CLI imports AuthModule for its services).
    @Optional() private readonly attempts?: AuthAttemptLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; ip?: string; principal?: Principal }>();
    // An address that spent its budget of failed attempts is refused before any token lookup. A
    // token this process already verified costs no lookup, so it skips that Redis read (it is
    // still counted against its own per-key budget by the rate-limit guard).
    const token = request.headers.authorization ? BEARER.exec(request.headers.authorization)?.[1] : undefined;
    if (!(token && this.authenticator.holds(token))) await this.attempts?.assertMayAuthenticate(request);
    const principal = await this.authenticate(request.headers.authorization).catch(async (error: unknown) => {
      if (error instanceof AppError && error.status === 401) await this.attempts?.recordFailure(request);
      throw error;
    });
    request.principal = principal;
    const permission = this.reflector.getAllAndOverride<Permission | undefined>(REQUIRED_PERMISSION, targets);
    if (permission && !hasPermission(principal.role, permission)) {
      throw new AppError(AuthErrors.FORBIDDEN, {
        message: `This operation needs the permission ${permission}, which the role ${principal.role} does not hold.`,
        metadata: { permission, role: principal.role },
      });
    }
    const superadminOnly = this.reflector.getAllAndOverride<boolean>(SUPERADMIN_ONLY, targets);
    if (superadminOnly && !principal.isSuperadmin) {
      throw new AppError(AuthErrors.FORBIDDEN, {
        message: principal.scopes ? 'A scoped key never acts as a superadmin.' : 'Only superadmins may do this.',
        metadata: { permission: SUPERADMIN_PERMISSION },
      });
    }
    // A scoped key may use a route only when the route's permission is one of its scopes (a
    // superadmin-only route is refused above: a scoped key's principal is never a superadmin).
    if (principal.scopes && !(permission && principal.scopes.includes(permission))) {
      throw new AppError(AuthErrors.FORBIDDEN, {
        message: `The API key in use is scoped to ${principal.scopes.join(', ')}; this operation needs ${permission ?? SUPERADMIN_PERMISSION}.`,
        metadata: { permission: permission ?? SUPERADMIN_PERMISSION, scopes: [...principal.scopes] },
      });
    }
    return true;
  }

  private async authenticate(header: string | undefined): Promise<Principal> {
    if (!header) throw new AppError(AuthErrors.UNAUTHENTICATED);
    const match = BEARER.exec(header);
    if (!match) throw new AppError(AuthErrors.INVALID_TOKEN, { message: 'The Authorization header must be `Bearer <token>`.' });
    return this.authenticator.authenticate(match[1]);
  }
}
