/**
 * The executor's lease on one queue (docs/merge-queue.md, "Fencing"): a holder id (random, one per
 * executor run) and the epoch, the fencing token the database grows on every take. Every write
 * an executor makes is applied only while the queue row still names this holder and epoch.
 */
export interface Lease {
  queueId: string;
  holder: string;
  epoch: bigint;
}

/** The executor no longer holds its lease: whatever it was about to write is dropped and its run ends. */
export class LeaseLost extends Error {
  constructor(
    readonly lease: Lease,
    why: string,
  ) {
    super(`merge-queue executor ${lease.holder} lost its lease on queue ${lease.queueId} (epoch ${lease.epoch}): ${why}`);
    this.name = 'LeaseLost';
  }
}

/** How often a lease is renewed: a third of its length, so two renewals may fail before it expires. */
export function renewEveryMs(leaseMs: number): number {
  return Math.max(50, Math.floor(leaseMs / 3));
}

/** The fence a new lease holder writes before it reads git back (see LocalMergeQueueGit.moveFence). */
export function fenceRef(queueId: string): string {
  return `refs/heads/mq-fence/${queueId}`;
}
