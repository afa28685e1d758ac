import type { World } from './world';

/** A merge-queue strategy under test; it reacts to PR arrivals and drives the shared World. */
export interface Policy {
  readonly name: string;
  arrive(pr: number): void;
  /** Invariant violations the policy's own checker found (the World checks landings itself). */
  violations(): number;
}

/**
 * Merges `prs` in order onto `parent`; a PR that conflicts goes back to its author (`requeue` runs
 * once they push a new head) and the rest is merged without it. Undefined when none is left.
 */
export function buildSkippingConflicts(
  world: World,
  parent: string,
  prs: readonly number[],
  requeue: (pr: number) => void,
): { sha: string; prs: number[] } | undefined {
  let members = [...prs];
  for (;;) {
    if (members.length === 0) return undefined;
    const built = world.build(parent, members);
    if (built.ok) return { sha: built.sha, prs: members };
    const blocked = built.pr;
    members = members.filter((n) => n !== blocked);
    world.scheduleFix(blocked, () => requeue(blocked));
  }
}

/** Inserts `pr` in queue order (by number): a PR back from its author's fix goes before every later arrival. */
export function insertInQueueOrder(queue: number[], pr: number): void {
  const at = queue.findIndex((m) => m > pr);
  queue.splice(at < 0 ? queue.length : at, 0, pr);
}
