/** Polling for what happens elsewhere (another process, the worker, a reconnect): one helper for every suite. */

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface PollOptions {
  /** Give up after this long (default 60 s: a loaded machine has taken tens of seconds for a worker job). */
  timeoutMs?: number;
  /** Wait between two checks (default 100 ms). */
  everyMs?: number;
}

/** Polls `check` until it returns a truthy value, and returns it; past the timeout throws naming `what`. An error thrown by `check` ends the wait. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false | null | 0 | ''>,
  { timeoutMs = 60_000, everyMs = 100 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Polls `check` (assertions) until it passes; past the timeout throws its last error. Returns how long it took. */
export async function eventuallyPasses(what: string, check: () => Promise<void>, options: PollOptions = {}): Promise<number> {
  const started = Date.now();
  let last: unknown = new Error(`${what} never checked`);
  const passed = await eventually(
    what,
    async () => {
      try {
        await check();
        return true;
      } catch (error) {
        last = error;
        return false;
      }
    },
    options,
  ).catch(() => false);
  if (!passed) throw last;
  return Date.now() - started;
}

/**
 * Polls `check` until it returns `status` (for about a second) and returns the last status seen:
 * what another API process answers once an invalidation published through Redis has reached it.
 */
export async function statusEventually(check: () => Promise<number>, status: number): Promise<number> {
  let seen = 0;
  await eventually(`status ${status}`, async () => (seen = await check()) === status, { timeoutMs: 1_000, everyMs: 20 }).catch(() => undefined);
  return seen;
}
