/**
 * A read shared by everyone who asks while it is in flight, and its outcome (value or failure)
 * reused for `ttlMs` after it settles: however many callers come at once, `read` runs once per
 * period in this process. For reads that public or unauthenticated callers can trigger (readiness
 * probes, metrics scrapes), so a storm of them cannot reach Postgres or Redis.
 */
export function sharedRead<T>(ttlMs: number, read: () => Promise<T>, now: () => number = Date.now): () => Promise<T> {
  let last: { settledAt: number | undefined; value: Promise<T> } | undefined;
  return () => {
    if (last && (last.settledAt === undefined || now() - last.settledAt < ttlMs)) return last.value;
    const entry: { settledAt: number | undefined; value: Promise<T> } = { settledAt: undefined, value: Promise.resolve().then(read) };
    const settle = () => {
      entry.settledAt = now();
    };
    entry.value.then(settle, settle);
    last = entry;
    return entry.value;
  };
}
