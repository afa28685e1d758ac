/**
 * Failpoints: named places where a crash-safety test makes the process die on the spot, the way
 * a power cut or the OOM killer would (SIGKILL: no `finally`, no shutdown hook, no flush).
 * `DPA_FAILPOINTS` arms them: a comma-separated list of names, each optionally `name@qualifier`
 * to fire only for one subject (a queue id). They are armed only when NODE_ENV is development or
 * test: never in production, and never when NODE_ENV is unset (which means production).
 *
 *   DPA_FAILPOINTS=merge-queue.executor.land.after   # the base ref moved, nothing recorded yet
 *
 * The names in use are listed in docs/merge-queue.md ("Crash safety"). A few places throw instead
 * of killing (`failpointThrow`): a bug that makes one subject fail while the process lives on.
 */
const armed = parse(process.env.NODE_ENV === 'development' || process.env.NODE_ENV === 'test' ? process.env.DPA_FAILPOINTS : undefined);

function parse(spec: string | undefined): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const item of (spec ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = item.indexOf('@');
    out.set(at < 0 ? item : item.slice(0, at), at < 0 ? null : item.slice(at + 1));
  }
  return out;
}

/** Kills this process at once when `name` is armed (for `qualifier`, if the failpoint names one). */
export function failpoint(name: string, qualifier?: string): void {
  if (armed.size === 0 || !armed.has(name)) return;
  const only = armed.get(name);
  if (only !== null && only !== qualifier) return;
  process.stderr.write(`failpoint ${name} fired: killing process ${process.pid}\n`);
  process.kill(process.pid, 'SIGKILL');
}

/** Thrown by failpointThrow. */
export class FailpointError extends Error {
  constructor(readonly failpointName: string) {
    super(`failpoint ${failpointName} fired`);
    this.name = 'FailpointError';
  }
}

/**
 * Throws a FailpointError when `name` is armed in DPA_FAILPOINTS (for `qualifier`, if the failpoint names one): a
 * bug in one subject (one queue's reducer) while the process and every other subject go on.
 */
export function failpointThrow(name: string, qualifier?: string): void {
  // Read at each call (unlike the kill failpoints): an in-process test arms it for a subject it just created.
  const now = process.env.NODE_ENV === 'development' || process.env.NODE_ENV === 'test' ? parse(process.env.DPA_FAILPOINTS) : new Map<string, string | null>();
  if (!now.has(name)) return;
  const only = now.get(name);
  if (only !== null && only !== qualifier) return;
  throw new FailpointError(name);
}
