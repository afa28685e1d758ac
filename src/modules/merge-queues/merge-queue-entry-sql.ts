import { Prisma } from '@/generated/prisma/client';
import { FINAL_ENTRY_STATUSES, MERGE_QUEUE_ENTRY_STATUSES, type MergeQueueEntryStatus } from './planner';

/*
 * What statements written by hand (the repository's, the metrics' read at scrape time) say about an
 * entry row of "MergeQueueEntry", from constants, never input.
 */

/** Entries still in the queue (the planner's final statuses are the rest). */
export const LIVE_ENTRY_STATUSES: readonly MergeQueueEntryStatus[] = MERGE_QUEUE_ENTRY_STATUSES.filter((s) => !FINAL_ENTRY_STATUSES.includes(s));
/** The same statuses as SQL literals. */
export const LIVE_STATUSES_SQL = Prisma.raw(LIVE_ENTRY_STATUSES.map((s) => `'${s}'`).join(', '));
/**
 * The head an entry is to be tested with, in SQL: the head waiting for a land in flight to end
 * (the planner's pendingHeadSha), else its head. Kept paths are the entry's only for this head.
 */
export const WANTED_HEAD_SQL = Prisma.sql`COALESCE("planner"->>'pendingHeadSha', "headSha")`;
/** A live entry (columns unqualified) with no changed paths kept for the head it is to be tested with. */
export const LACKS_PATHS_SQL = Prisma.sql`"status" IN (${LIVE_STATUSES_SQL}) AND "pathsHead" IS DISTINCT FROM ${WANTED_HEAD_SQL}`;
/** The ids of the queues with path groups (a statement of its own, for `IN (...)`). */
export const QUEUES_WITH_PATH_GROUPS_SQL = Prisma.sql`SELECT "id" FROM "MergeQueue" WHERE jsonb_typeof("settings"->'pathGroups') = 'array' AND "settings"->'pathGroups' <> '[]'::jsonb`;
