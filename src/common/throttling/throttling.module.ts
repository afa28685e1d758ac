import { Global, Inject, Module, OnModuleInit } from '@nestjs/common';
import { APP_GUARD, HttpAdapterHost } from '@nestjs/core';
import { ThrottlerModule, type ThrottlerOptions } from '@nestjs/throttler';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import type { Principal } from '@/common/auth/principal';
import { addressTracker, AuthAttemptLimiter, networkTracker } from './auth-attempt-limiter';
import { RateLimitGuard } from './rate-limit.guard';
import { RateLimitStore } from './rate-limit.store';
import { BASE_RATE_LIMITS, isNamedRateLimit, limitOf, NAMED_RATE_LIMITS, rateLimitKey, type RateLimitName } from './rate-limits';

@Global()
@Module({ providers: [RateLimitStore], exports: [RateLimitStore] })
class RateLimitStoreModule {}

function principalTracker(req: { principal?: Principal }): string {
  return `key:${req.principal?.apiKeyId}`;
}

/** The member or service account behind the key, whichever of its keys is used. */
function actorTracker(req: { principal?: Principal }): string {
  return `actor:${req.principal?.organizationId}:${req.principal?.actorType}:${req.principal?.actorId}`;
}

function organizationTracker(req: { principal?: Principal }): string {
  return `org:${req.principal?.organizationId}`;
}

function trackerOf(name: RateLimitName): (req: { principal?: Principal; ip?: string }) => string {
  if (name === 'address') return addressTracker;
  // The guard counts this budget only for IPv6 callers (RateLimitGuard.applies).
  if (name === 'network') return (req) => networkTracker(req) ?? addressTracker(req);
  if (name === 'actor') return actorTracker;
  if (name === 'organization') return organizationTracker;
  if (!isNamedRateLimit(name)) return principalTracker;
  const per: string = NAMED_RATE_LIMITS[name].per;
  return per === 'address' ? addressTracker : per === 'organization' ? organizationTracker : per === 'actor' ? actorTracker : principalTracker;
}

function throttlers(config: AppConfig): ThrottlerOptions[] {
  const names: RateLimitName[] = [...BASE_RATE_LIMITS, ...(Object.keys(NAMED_RATE_LIMITS) as RateLimitName[])];
  return names.map((name) => ({
    name,
    limit: limitOf(name, config),
    ttl: config.rateLimits.windowMs,
    getTracker: trackerOf(name) as ThrottlerOptions['getTracker'],
  }));
}

/**
 * Rate limits shared by every API process through Redis (see rate-limits.ts for the policy). The
 * API module imports this after AuthModule: global guards run in registration order, and the
 * per-key budgets need the principal the bearer guard sets.
 */
@Global()
@Module({
  imports: [
    RateLimitStoreModule,
    ThrottlerModule.forRootAsync({
      inject: [APP_CONFIG, RateLimitStore],
      useFactory: (config: AppConfig, storage: RateLimitStore) => ({
        storage,
        throttlers: throttlers(config),
        // Budgets are per caller across all routes, not per route as the library's default key is.
        generateKey: (_context, tracker) => rateLimitKey(config.queuePrefix, tracker),
        setHeaders: false,
      }),
    }),
  ],
  providers: [AuthAttemptLimiter, { provide: APP_GUARD, useClass: RateLimitGuard }],
  exports: [AuthAttemptLimiter],
})
export class ThrottlingModule implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The client address behind a proxy is only right when Express is told which proxies to trust. */
  onModuleInit(): void {
    this.adapterHost.httpAdapter?.getInstance<{ set?: (name: string, value: unknown) => void }>()?.set?.('trust proxy', this.config.trustProxy);
  }
}
