/**
 * Polls `check` until it returns `status` (at most ~1 s): what another API process answers once an
 * invalidation published through Redis has reached it.
 */
export async function statusEventually(check: () => Promise<number>, status: number): Promise<number> {
  let seen = 0;
  for (let i = 0; i < 50 && seen !== status; i++) {
    seen = await check();
    if (seen !== status) await new Promise((r) => setTimeout(r, 20));
  }
  return seen;
}
