import { Inject, Injectable } from '@nestjs/common';
import { normalizeIp } from '@nestjs/throttler';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { RateLimitStore } from './rate-limit.store';
import { rateLimited } from './rate-limit-headers';
import { addressBlockKey, rateLimitKey } from './rate-limits';

/** The per-address tracker: IPv6 callers are grouped by /64, as one host usually owns the subnet. */
export function addressTracker(request: { ip?: string }): string {
  return `addr:${normalizeIp(request.ip ?? 'unknown')}`;
}

/**
 * Failed authentication attempts, per client address, on the same Redis budget as public routes.
 * The bearer guard asks `assertMayAuthenticate` before it looks a token up (one Redis read) and
 * reports each 401 with `recordFailure`; once the address has spent its budget it is refused with
 * 429 before any lookup, until the block ends.
 */
@Injectable()
export class AuthAttemptLimiter {
  constructor(
    private readonly store: RateLimitStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async assertMayAuthenticate(request: { ip?: string }): Promise<void> {
    const blockedMs = await this.store.blockedFor(addressBlockKey(this.config.queuePrefix, addressTracker(request)));
    if (blockedMs > 0) throw this.refusal(Math.ceil(blockedMs / 1000));
  }

  async recordFailure(request: { ip?: string }): Promise<void> {
    const tracker = addressTracker(request);
    const { windowMs, unauthenticatedPerAddress } = this.config.rateLimits;
    const record = await this.store.increment(rateLimitKey(this.config.queuePrefix, tracker), windowMs, unauthenticatedPerAddress, windowMs, 'address');
    if (!record.isBlocked) return;
    await this.markBlocked(tracker, record.timeToBlockExpire);
    throw this.refusal(record.timeToBlockExpire);
  }

  /** Called when the address budget is spent by any route, so that authenticating is refused too. */
  async markBlocked(tracker: string, seconds: number): Promise<void> {
    await this.store.block(addressBlockKey(this.config.queuePrefix, tracker), seconds * 1000);
  }

  private refusal(retryAfterSeconds: number) {
    const { windowMs, unauthenticatedPerAddress } = this.config.rateLimits;
    return rateLimited('address', unauthenticatedPerAddress, windowMs, retryAfterSeconds);
  }
}
