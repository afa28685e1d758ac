import { Prisma } from '@/generated/prisma/client';
import { LIVE_ENTRY_STATUSES } from './queue-state-codec';

/*
 * What statements written by hand (the store's, the metrics' read at scrape time) say about an
 * entry row of "MergeQueueEntry", from constants, never input.
 */

/** The live entry statuses as SQL literals. */
export const LIVE_STATUSES_SQL = Prisma.raw(LIVE_ENTRY_STATUSES.map((s) => `'${s}'`).join(', '));
/**
 * The head an entry is to be tested with, in SQL: the head waiting for a land in flight to end
 * (the planner's pendingHeadSha), else its head. Kept paths are the entry's only for this head.
 */
export const WANTED_HEAD_SQL = Prisma.sql`COALESCE("planner"->>'pendingHeadSha', "headSha")`;
/**
 * A live entry (columns unqualified) whose lanes were not matched for the head it is to be tested
 * with under the queue's current path groups (its paths not asked for it, or the groups changed).
 */
export const LACKS_PATHS_SQL = Prisma.sql`"status" IN (${LIVE_STATUSES_SQL}) AND "lanesHead" IS DISTINCT FROM ${WANTED_HEAD_SQL}`;
/** The ids of the queues with path groups (a statement of its own, for `IN (...)`). */
export const QUEUES_WITH_PATH_GROUPS_SQL = Prisma.sql`SELECT "id" FROM "MergeQueue" WHERE jsonb_typeof("settings"->'pathGroups') = 'array' AND "settings"->'pathGroups' <> '[]'::jsonb`;
