import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  ThrottlerGuard,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
  type ThrottlerRequest,
} from '@nestjs/throttler';
import {
  THROTTLER_BLOCK_DURATION,
  THROTTLER_KEY_GENERATOR,
  THROTTLER_LIMIT,
  THROTTLER_SKIP,
  THROTTLER_TRACKER,
  THROTTLER_TTL,
} from '@nestjs/throttler/dist/throttler.constants';
import type { Response } from 'express';
import type { Principal } from '@/common/auth/principal';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { AuthAttemptLimiter, networkTracker } from './auth-attempt-limiter';
import { FAIL_OPEN, RateLimitStore } from './rate-limit.store';
import { RATE_LIMIT_NAMES, SKIP_RATE_LIMIT } from './rate-limit.decorators';
import { budgetState, rateLimited, rateLimitHeaders, type BudgetState } from './rate-limit-headers';
import { isNamedRateLimit, NAMED_RATE_LIMITS, type RateLimitName } from './rate-limits';

type LimitedRequest = { principal?: Principal; ip?: string; rateLimitTightest?: BudgetState };

/** One budget of a route, its settings read from the route's decorators and the module's options. */
type PlannedBudget = Omit<ThrottlerRequest, 'context'>;

/**
 * What the decorators of one route say about its budgets: read once per route (decorator metadata
 * does not change while the process runs), not on every request. The library's guard reads six
 * metadata keys per budget per request (48 lookups and 24 awaits for our eight budgets).
 * `dynamic`: a setting is a function of the request, so the library's own path decides.
 */
interface RoutePlan {
  skip: boolean;
  dynamic: boolean;
  named: string[] | undefined;
  budgets: PlannedBudget[];
}

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

  private readonly plans = new WeakMap<object, WeakMap<object, RoutePlan>>();

  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return this.planFor(context).skip;
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const plan = this.planFor(context);
    let allowed = true;
    if (plan.dynamic) allowed = await super.canActivate(context);
    else if (!plan.skip) {
      // The library's loop, in its order, with the settings read once per route.
      for (const budget of plan.budgets) if (!(await this.handleRequest({ context, ...budget }))) allowed = false;
    }
    const { req, res } = this.getRequestResponse(context) as { req: LimitedRequest; res: Response };
    if (req.rateLimitTightest) res.set(rateLimitHeaders(req.rateLimitTightest));
    return allowed;
  }

  private planFor(context: ExecutionContext): RoutePlan {
    const handler = context.getHandler();
    const classRef = context.getClass();
    let byClass = this.plans.get(handler);
    if (!byClass) this.plans.set(handler, (byClass = new WeakMap()));
    let plan = byClass.get(classRef);
    if (!plan) byClass.set(classRef, (plan = this.readPlan(handler, classRef)));
    return plan;
  }

  private readPlan(handler: object, classRef: object): RoutePlan {
    const targets = [handler, classRef] as Parameters<Reflector['getAllAndOverride']>[1];
    const read = <T>(key: string) => this.reflector.getAllAndOverride<T | undefined>(key, targets);
    const plan: RoutePlan = {
      skip: read<boolean>(SKIP_RATE_LIMIT) === true,
      dynamic: false,
      named: read<string[]>(RATE_LIMIT_NAMES),
      budgets: [],
    };
    const number = (value: unknown, option: string, throttler: ThrottlerOptions): number => {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || Number.isNaN(n))
        throw new Error(`Invalid "${option}" for the "${throttler.name}" throttler: expected a number, got ${JSON.stringify(value)}.`);
      return n;
    };
    for (const throttler of this.throttlers) {
      const name = throttler.name as string;
      if (read<boolean>(THROTTLER_SKIP + name)) continue;
      const limit = read<unknown>(THROTTLER_LIMIT + name) ?? throttler.limit;
      const ttl = read<unknown>(THROTTLER_TTL + name) ?? throttler.ttl;
      const blockDuration = read<unknown>(THROTTLER_BLOCK_DURATION + name) ?? throttler.blockDuration;
      if ([limit, ttl, blockDuration].some((v) => typeof v === 'function') || throttler.skipIf || this.commonOptions.skipIf) {
        plan.dynamic = true;
        return plan;
      }
      const ttlMs = number(ttl, 'ttl', throttler);
      plan.budgets.push({
        throttler,
        limit: number(limit, 'limit', throttler),
        ttl: ttlMs,
        blockDuration: number(blockDuration ?? ttlMs, 'blockDuration', throttler),
        getTracker:
          read<ThrottlerRequest['getTracker']>(THROTTLER_TRACKER + name) ||
          throttler.getTracker ||
          (this.commonOptions.getTracker as ThrottlerRequest['getTracker']),
        generateKey:
          read<ThrottlerRequest['generateKey']>(THROTTLER_KEY_GENERATOR + name) ||
          throttler.generateKey ||
          (this.commonOptions.generateKey as ThrottlerRequest['generateKey']),
      });
    }
    return plan;
  }

  protected override async handleRequest({ context, limit, ttl, throttler, blockDuration, getTracker, generateKey }: ThrottlerRequest): Promise<boolean> {
    const name = throttler.name as RateLimitName;
    const req = this.getRequestResponse(context).req as LimitedRequest;
    if (!this.applies(name, req, this.planFor(context).named)) return true;
    const tracker = await getTracker(req, context);
    const record = await this.storageService.increment(generateKey(context, tracker, name), ttl, limit, blockDuration, name);
    if (record === FAIL_OPEN) return true;
    if (record.isBlocked) {
      if (name === 'address' || name === 'network') await this.attempts.markBlocked(tracker, record.timeToBlockExpire);
      throw rateLimited(name, limit, this.config.rateLimits.windowMs, record.timeToBlockExpire);
    }
    const state = budgetState(limit, ttl, record);
    if (!req.rateLimitTightest || state.remaining < req.rateLimitTightest.remaining) req.rateLimitTightest = state;
    return true;
  }

  private applies(name: RateLimitName, req: LimitedRequest, named: string[] | undefined): boolean {
    // A route whose named budget replaces the address budget (webhooks: a provider's few delivery
    // addresses must neither spend nor be blocked by the budget of unauthenticated callers).
    if (name === 'address' || name === 'network') {
      const replaced = named?.some((n) => isNamedRateLimit(n) && 'replacesAddressBudget' in NAMED_RATE_LIMITS[n]);
      return !req.principal && !replaced && (name === 'address' || networkTracker(req) !== undefined);
    }
    if (!isNamedRateLimit(name)) return Boolean(req.principal);
    if (NAMED_RATE_LIMITS[name].per !== 'address' && !req.principal) return false;
    return named?.includes(name) === true;
  }
}
