import type { CodeSource, MergeQueue, MergeQueueBatch as BatchRow, MergeQueueEntry as EntryRow, Prisma } from '@/generated/prisma/client';
import { LIVE_BATCH_STATUSES, LIVE_ENTRY_STATUSES } from './queue-state-codec';

/** Final entries and batches shown beside the live ones, newest first. */
export const RECENT_FINAL = 20;

/**
 * An entry row as views and writes that answer with it read it: without its changed paths (up to
 * KEPT_PATHS_LIMITS of them), which only the worker's matching reads (issue 41).
 */
export type EntryView = Omit<EntryRow, 'changedPaths'>;
/** The `omit` every read of an entry row for a view or an answer passes. */
export const ENTRY_VIEW_OMIT = { changedPaths: true } as const;

/** A queue row with its code source. */
export type QueueWithSource = MergeQueue & { repository: CodeSource };

/** What the API renders a queue from: the row, its live entries and batches and the most recent final ones. */
export interface QueueView {
  row: QueueWithSource;
  entries: EntryView[];
  batches: BatchRow[];
}

/** The organization's queue as the API renders it, read with `client` (a transaction's, for a snapshot), or null when there is none. */
export async function readQueueView(client: Prisma.TransactionClient, organizationId: string, id: string): Promise<QueueView | null> {
  const row = await client.mergeQueue.findFirst({ where: { id, organizationId }, include: { repository: true } });
  return row ? renderQueue(client, row) : null;
}

/** Live entries and batches, plus the RECENT_FINAL most recent final ones of each. */
export async function renderQueue(client: Prisma.TransactionClient, row: QueueWithSource): Promise<QueueView> {
  const where = { queueId: row.id, organizationId: row.organizationId };
  const recent = { orderBy: [{ updatedAt: 'desc' as const }, { position: 'desc' as const }], take: RECENT_FINAL };
  const [liveEntries, finalEntries, liveBatches, finalBatches] = await Promise.all([
    client.mergeQueueEntry.findMany({ where: { ...where, status: { in: [...LIVE_ENTRY_STATUSES] } }, omit: ENTRY_VIEW_OMIT }),
    client.mergeQueueEntry.findMany({ where: { ...where, status: { notIn: [...LIVE_ENTRY_STATUSES] } }, ...recent, omit: ENTRY_VIEW_OMIT }),
    client.mergeQueueBatch.findMany({ where: { ...where, status: { in: [...LIVE_BATCH_STATUSES] } } }),
    client.mergeQueueBatch.findMany({ where: { ...where, status: { notIn: [...LIVE_BATCH_STATUSES] } }, ...recent }),
  ]);
  const entries = [...liveEntries, ...finalEntries].sort((a, b) => a.position - b.position);
  const batches = [...liveBatches, ...finalBatches].sort((a, b) => a.position - b.position);
  return { row, entries, batches };
}
