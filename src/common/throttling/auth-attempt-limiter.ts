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
 * The wider tracker of an IPv6 caller, its /48 (a site's usual allocation, 65,536 /64s), so that a
 * network cannot multiply the per-address budget by its /64s; undefined for IPv4 (and IPv4-mapped,
 * loopback or unparsable) callers, who are counted per address only.
 */
export function networkTracker(request: { ip?: string }): string | undefined {
  // normalizeIp gives IPv6 as its subnet (`2001:db8:1::/48`), IPv4 (and IPv4-mapped) and ::1 as the address.
  const network = normalizeIp(request.ip ?? '', 48);
  return typeof network === 'string' && network.endsWith('/48') ? `net:${network}` : undefined;
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
    const network = networkTracker(request);
    const [address, wider] = await Promise.all([
      this.store.blockedFor(addressBlockKey(this.config.queuePrefix, addressTracker(request))),
      network ? this.store.blockedFor(addressBlockKey(this.config.queuePrefix, network)) : 0,
    ]);
    if (address > 0) throw this.refusal('address', Math.ceil(address / 1000));
    if (wider > 0) throw this.refusal('network', Math.ceil(wider / 1000));
  }

  async recordFailure(request: { ip?: string }): Promise<void> {
    const { windowMs, unauthenticatedPerAddress, unauthenticatedPerNetwork } = this.config.rateLimits;
    const network = networkTracker(request);
    const budgets: { name: 'address' | 'network'; tracker: string; limit: number }[] = [
      { name: 'address', tracker: addressTracker(request), limit: unauthenticatedPerAddress },
      ...(network ? [{ name: 'network' as const, tracker: network, limit: unauthenticatedPerNetwork }] : []),
    ];
    for (const { name, tracker, limit } of budgets) {
      const record = await this.store.increment(rateLimitKey(this.config.queuePrefix, tracker), windowMs, limit, windowMs, name);
      if (!record.isBlocked) continue;
      await this.markBlocked(tracker, record.timeToBlockExpire);
      throw this.refusal(name, record.timeToBlockExpire);
    }
  }

  /** Called when the address (or /48) budget is spent by any route, so that authenticating is refused too. */
  async markBlocked(tracker: string, seconds: number): Promise<void> {
    await this.store.block(addressBlockKey(this.config.queuePrefix, tracker), seconds * 1000);
  }

  private refusal(name: 'address' | 'network', retryAfterSeconds: number) {
    const { windowMs, unauthenticatedPerAddress, unauthenticatedPerNetwork } = this.config.rateLimits;
    return rateLimited(name, name === 'address' ? unauthenticatedPerAddress : unauthenticatedPerNetwork, windowMs, retryAfterSeconds);
  }
}
