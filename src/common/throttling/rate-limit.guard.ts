import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectThrottlerOptions, InjectThrottlerStorage, ThrottlerGuard, type ThrottlerModuleOptions, type ThrottlerRequest } from '@nestjs/throttler';
import type { Response } from 'express';
import type { Principal } from '@/common/auth/principal';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { AuthAttemptLimiter } from './auth-attempt-limiter';
import { FAIL_OPEN, RateLimitStore } from './rate-limit.store';
import { RATE_LIMIT_NAMES, SKIP_RATE_LIMIT } from './rate-limit.decorators';
import { budgetState, rateLimited, rateLimitHeaders, type BudgetState } from './rate-limit-headers';
import { isNamedRateLimit, NAMED_RATE_LIMITS, type RateLimitName } from './rate-limits';

type LimitedRequest = { principal?: Principal; ip?: string; rateLimitTightest?: BudgetState };

/**
 * @nestjs/throttler's guard with our policy. It runs after the bearer guard (see AppModule), so
 * an authenticated request counts against its API key's budget (and the route's named budgets),
 * a public one against its client address. Over budget it throws our 429 error body; otherwise it
 * sets the RateLimit-* headers of the budget closest to running out.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: RateLimitStore,
    reflector: Reflector,
    private readonly attempts: AuthAttemptLimiter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super(options, storage, reflector);
  }

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return this.reflector.getAllAndOverride<boolean>(SKIP_RATE_LIMIT, [context.getHandler(), context.getClass()]) === true;
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const allowed = await super.canActivate(context);
    const { req, res } = this.getRequestResponse(context) as { req: LimitedRequest; res: Response };
    if (req.rateLimitTightest) res.set(rateLimitHeaders(req.rateLimitTightest));
    return allowed;
  }

  protected override async handleRequest({ context, limit, ttl, throttler, blockDuration, getTracker, generateKey }: ThrottlerRequest): Promise<boolean> {
    const name = throttler.name as RateLimitName;
    const req = this.getRequestResponse(context).req as LimitedRequest;
    if (!this.applies(name, req, context)) return true;
    const tracker = await getTracker(req, context);
    const record = await this.storageService.increment(generateKey(context, tracker, name), ttl, limit, blockDuration, name);
    if (record === FAIL_OPEN) return true;
    if (record.isBlocked) {
      if (name === 'address') await this.attempts.markBlocked(tracker, record.timeToBlockExpire);
      throw rateLimited(name, limit, this.config.rateLimits.windowMs, record.timeToBlockExpire);
    }
    const state = budgetState(limit, ttl, record);
    if (!req.rateLimitTightest || state.remaining < req.rateLimitTightest.remaining) req.rateLimitTightest = state;
    return true;
  }

  private applies(name: RateLimitName, req: LimitedRequest, context: ExecutionContext): boolean {
    const named = this.reflector.getAllAndOverride<string[] | undefined>(RATE_LIMIT_NAMES, [context.getHandler(), context.getClass()]);
    // A route whose named budget replaces the address budget (webhooks: a provider's few delivery
    // addresses must neither spend nor be blocked by the budget of unauthenticated callers).
    if (name === 'address') return !req.principal && !named?.some((n) => isNamedRateLimit(n) && 'replacesAddressBudget' in NAMED_RATE_LIMITS[n]);
    if (!isNamedRateLimit(name)) return Boolean(req.principal);
    if (NAMED_RATE_LIMITS[name].per !== 'address' && !req.principal) return false;
    return named?.includes(name) === true;
  }
}
