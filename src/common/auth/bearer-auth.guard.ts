import { CanActivate, ExecutionContext, Injectable, Optional } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError } from '@/common/errors/app-error';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { IS_PUBLIC, MINIMUM_ROLE } from './auth.decorators';
import { Principal, Role, roleAtLeast } from './principal';
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
    // An address that spent its budget of failed attempts is refused before any token lookup.
    await this.attempts?.assertMayAuthenticate(request);
    const principal = await this.authenticate(request.headers.authorization).catch(async (error: unknown) => {
      if (error instanceof AppError && error.status === 401) await this.attempts?.recordFailure(request);
      throw error;
    });
    request.principal = principal;
    const minimum = this.reflector.getAllAndOverride<Role | undefined>(MINIMUM_ROLE, targets);
    if (minimum && !roleAtLeast(principal.role, minimum)) {
      throw new AppError(AuthErrors.FORBIDDEN, { metadata: { requiredRole: minimum } });
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
