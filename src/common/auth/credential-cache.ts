import type { Principal } from './principal';

export interface CachedCredential {
  principal: Principal;
  expiresAt: number | null;
  cachedUntil: number;
}

/**
 * Verified credentials of this process, keyed by token hash. Entries live for a short TTL and are
 * dropped at once when any process announces a revocation. `epoch` guards against a fill that
 * read the database before a revocation and would otherwise store the stale answer after it.
 */
export class CredentialCache {
  private readonly entries = new Map<string, CachedCredential>();
  private epochValue = 0;
  private enabled = true;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get epoch(): number {
    return this.epochValue;
  }

  get(tokenHash: string, now: number): CachedCredential | undefined {
    const entry = this.entries.get(tokenHash);
    if (!entry) return undefined;
    if (entry.cachedUntil <= now) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return entry;
  }

  /** Stores unless something was invalidated since `epochAtRead` or caching is off. */
  set(tokenHash: string, principal: Principal, expiresAt: number | null, now: number, epochAtRead: number): void {
    if (!this.enabled || this.ttlMs === 0 || epochAtRead !== this.epochValue) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(tokenHash, { principal, expiresAt, cachedUntil: now + this.ttlMs });
  }

  /** `all` drops every entry (announced when a process lost track of which ones to drop). */
  invalidate(match: { tokenHash?: string; actorId?: string; organizationId?: string; all?: boolean }): void {
    this.epochValue++;
    if (match.all) this.entries.clear();
    if (match.tokenHash) this.entries.delete(match.tokenHash);
    if (match.actorId || match.organizationId) {
      for (const [hash, entry] of this.entries) {
        if (entry.principal.actorId === match.actorId || entry.principal.organizationId === match.organizationId) this.entries.delete(hash);
      }
    }
  }

  /** While revocations cannot reach this process (Redis down), nothing is cached. */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.epochValue++;
    if (!enabled) this.entries.clear();
  }
}
