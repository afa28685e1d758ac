/**
 * The local pre-count of rate-limit budgets: plain logic, no Redis, no Nest.
 *
 * Redis holds every budget's count (shared by all API processes). Asking it on every request costs
 * a round trip per budget (two for an authenticated request). A process may instead count a hit
 * locally when the budget is far from spent by what it last read from Redis: the hit is added to
 * Redis a moment later, with the process's other pending hits, in one round trip (a flush). Near
 * the limit, with a stale reading or after a refusal, every hit goes to Redis at once, as before.
 *
 * Tolerance: a hit counted locally was admitted on a reading at most `freshMs` old, with at least
 * `margin(limit)` requests of headroom left. So the budget is exact unless the other processes
 * together spend more than that headroom on one budget within `freshMs`; then it may admit at most
 * what they sent beyond the headroom in that time. A small budget (limit up to `minMargin`) is
 * never counted locally, so it stays exact.
 */

/** What the storage returns for a hit (as @nestjs/throttler's ThrottlerStorage record; times in seconds). */
export interface HitRecord {
  totalHits: number;
  timeToExpire: number;
  isBlocked: boolean;
  timeToBlockExpire: number;
}

/** How the budget of one key is counted in Redis (what a flush needs to send). */
export interface BudgetSpec {
  ttlMs: number;
  limit: number;
  blockDurationMs: number;
  name: string;
}

export interface PreCountPolicy {
  /** A reading older than this is not trusted for a local decision. */
  freshMs: number;
  /** The smallest headroom kept, in requests; also the largest limit never counted locally. */
  minMargin: number;
  /** The headroom kept as a share of the limit. */
  marginShare: number;
  /** At most this many budgets are remembered; past it, those with nothing pending are forgotten. */
  maxEntries: number;
}

export const DEFAULT_PRE_COUNT_POLICY: PreCountPolicy = { freshMs: 200, minMargin: 20, marginShare: 0.1, maxEntries: 10_000 };

interface Entry {
  spec: BudgetSpec;
  /** The count Redis last answered (in the current window). */
  known: number;
  /** Hits admitted here and not yet added to Redis. */
  pending: number;
  windowEndsAt: number;
  syncedAt: number;
  blocked: boolean;
}

/** A hit to add to Redis: `hits` at once. */
export interface PendingHits {
  hitKey: string;
  hits: number;
  spec: BudgetSpec;
}

export class LocalPreCount {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly policy: PreCountPolicy = DEFAULT_PRE_COUNT_POLICY) {}

  margin(limit: number): number {
    return Math.max(this.policy.minMargin, Math.ceil(limit * this.policy.marginShare));
  }

  /** Counts the hit here and returns its record when the last reading allows it; undefined means: ask Redis. */
  tryLocal(hitKey: string, limit: number, now: number): HitRecord | undefined {
    const entry = this.entries.get(hitKey);
    if (!entry || entry.blocked || entry.spec.limit !== limit) return undefined;
    if (now - entry.syncedAt > this.policy.freshMs || now >= entry.windowEndsAt) return undefined;
    const total = entry.known + entry.pending + 1;
    if (total > limit - this.margin(limit)) return undefined;
    entry.pending++;
    return { totalHits: total, timeToExpire: Math.ceil((entry.windowEndsAt - now) / 1000), isBlocked: false, timeToBlockExpire: 0 };
  }

  /** The hits of a key not yet in Redis, handed to a synchronous increment (which adds them). */
  takePending(hitKey: string): number {
    const entry = this.entries.get(hitKey);
    if (!entry) return 0;
    const hits = entry.pending;
    entry.pending = 0;
    return hits;
  }

  /** Every key's pending hits, taken for one flush. */
  takeAllPending(): PendingHits[] {
    const out: PendingHits[] = [];
    for (const [hitKey, entry] of this.entries) {
      if (entry.pending === 0) continue;
      out.push({ hitKey, hits: entry.pending, spec: entry.spec });
      entry.pending = 0;
    }
    return out;
  }

  hasPending(): boolean {
    for (const entry of this.entries.values()) if (entry.pending > 0) return true;
    return false;
  }

  /** Records what Redis answered for a key (after a synchronous increment or a flush). */
  synced(hitKey: string, spec: BudgetSpec, answer: { totalHits: number; timeToExpireMs: number; isBlocked: boolean }, now: number): void {
    const windowEndsAt = now + Math.max(0, answer.timeToExpireMs);
    const entry = this.entries.get(hitKey);
    if (!entry) {
      if (this.entries.size >= this.policy.maxEntries) this.forgetIdle(now);
      this.entries.set(hitKey, { spec, known: answer.totalHits, pending: 0, windowEndsAt, syncedAt: now, blocked: answer.isBlocked });
      return;
    }
    // Answers of one window only grow; one that ends later than this window is a new window.
    const newWindow = windowEndsAt > entry.windowEndsAt + 1_000 || now >= entry.windowEndsAt;
    entry.known = newWindow ? answer.totalHits : Math.max(entry.known, answer.totalHits);
    // Redis's expiry is the truth (answers of one window give about the same end).
    entry.windowEndsAt = windowEndsAt;
    entry.spec = spec;
    entry.syncedAt = now;
    entry.blocked = answer.isBlocked;
  }

  /** Forgets a key's reading (Redis could not answer): its next hit asks Redis. */
  forget(hitKey: string): void {
    this.entries.delete(hitKey);
  }

  get size(): number {
    return this.entries.size;
  }

  private forgetIdle(now: number): void {
    for (const [hitKey, entry] of this.entries) {
      if (entry.pending === 0 && (now >= entry.windowEndsAt || now - entry.syncedAt > this.policy.freshMs)) this.entries.delete(hitKey);
    }
    if (this.entries.size < this.policy.maxEntries) return;
    for (const [hitKey, entry] of this.entries) if (entry.pending === 0) this.entries.delete(hitKey);
  }
}
