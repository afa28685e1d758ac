import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError } from '@/common/errors/app-error';
import { ApiKeyAuthenticator } from './api-key-authenticator.service';
import { IS_PUBLIC, MINIMUM_ROLE } from './auth.decorators';
import { Principal, Role, roleAtLeast } from './principal';
import { AuthErrors } from '@/common/errors/common.errors';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Deny by default: every route needs a valid bearer token unless marked @Public(). */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; principal?: Principal }>();
    const header = request.headers.authorization;
    if (!header) throw new AppError(AuthErrors.UNAUTHENTICATED);
    const match = BEARER.exec(header);
    if (!match) throw new AppError(AuthErrors.INVALID_TOKEN, { message: 'The Authorization header must be `Bearer <token>`.' });
    const principal = await this.authenticator.authenticate(match[1]);
    request.principal = principal;
    const minimum = this.reflector.getAllAndOverride<Role | undefined>(MINIMUM_ROLE, targets);
    if (minimum && !roleAtLeast(principal.role, minimum)) {
      throw new AppError(AuthErrors.FORBIDDEN, { metadata: { requiredRole: minimum } });
    }
    return true;
  }
}
