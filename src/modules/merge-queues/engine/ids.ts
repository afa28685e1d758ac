import { createHash } from 'node:crypto';

/**
 * The row id of a planner batch: a UUID (version 5 layout) derived from the queue id and the
 * planner's per-queue batch id ("b12"), so that the event transaction never has to look it up.
 */
export function batchRowId(queueId: string, plannerKey: string): string {
  const h = createHash('sha1').update(`merge-queue-batch:${queueId}:${plannerKey}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** Where a batch's candidate is published: deterministic, so publishing again is harmless. */
export function candidateRef(queueId: string, plannerKey: string): string {
  return `refs/heads/mq/${queueId}/${plannerKey}`;
}
