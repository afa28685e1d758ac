import type { MergeQueueOperation } from '@/modules/merge-queues/planner';
import { QueueDriver } from './merge-queue-driver';

/**
 * Builders shared by the planner specs (reducer, order, configure). Spec helpers only: product code
 * never imports them.
 */

/** Answers every operation and passes every CI run until the queue is at rest (at most `rounds` rounds). */
export function landAll(d: QueueDriver, rounds = 50): void {
  for (let i = 0; i < rounds; i++) {
    d.complete(['prepare', 'publish', 'startCi', 'cleanup']);
    const testing = d.live().filter((b) => b.status === 'testing' && b.checks.every((c) => c.state === 'pending'));
    for (const b of testing) d.report(b.id, 'success');
    d.complete(['land', 'cleanup']);
    if (d.live().length === 0) return;
  }
}

/** One PR tested and landing: its land is issued. */
export function landing(): { d: QueueDriver; land: MergeQueueOperation; batchId: string } {
  const d = new QueueDriver();
  d.enqueue(1);
  d.complete();
  const [b] = d.live();
  d.report(b.id, 'success');
  return { d, land: d.take('land'), batchId: b.id };
}

/** Enqueues `numbers` while the queue is paused, then resumes it: the planner sees them all at once. */
export function enqueueTogether(d: QueueDriver, numbers: number[]): void {
  d.send({ type: 'pause' });
  for (const n of numbers) d.enqueue(n);
  d.send({ type: 'resume' });
}
