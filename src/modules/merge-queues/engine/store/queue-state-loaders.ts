import type { MergeQueue, Prisma } from '@/generated/prisma/client';
import { type BatchState, type EntryState, type MergeQueueState, type WindowEdge, windowSize } from '../../planner';
import { stateOf } from './queue-state-codec';

/*
 * How an event's transaction reads a queue's planner state from its rows (the codec puts it
 * together): the whole state, or a window of it (planner/window.ts) that leaves out the plain
 * waiting entries past the head of the line, with the entries an event names added back.
 */

/**
 * A window's edge (null: it left nothing out), for a queue that posts commit statuses the edge of
 * the front it loaded (planner/window.ts frontHolds; null: none or nothing left out), and each
 * entry's place in the state's list (`plannerSeq`), in the window's order.
 */
export interface Window {
  edge: WindowEdge | null;
  frontEdge: WindowEdge | null;
  seqs: number[];
}

/** The planner state of a queue row: its document with the entries and batches the state holds, in the state's order. */
export async function assembleState(tx: Prisma.TransactionClient, row: MergeQueue): Promise<MergeQueueState> {
  // One round trip, each list as one JSON text (a row per entry through the raw-result mapping costs
  // several times more at 1,000 entries).
  const [lists] = await tx.$queryRaw<{ entries: string; batches: string }[]>`
    SELECT
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "MergeQueueEntry" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL)::text AS "entries",
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "MergeQueueBatch" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL)::text AS "batches"`;
  return stateOf(row, JSON.parse(lists.entries) as EntryState[], JSON.parse(lists.batches) as BatchState[]);
}

/**
 * A window of the queue's planner state (planner/window.ts), in one round trip: the document, every
 * entry the state holds that is not plain waiting (`MergeQueueEntry_hot_idx`), the first
 * `windowSize` plain waiting ones not set aside in planning order (`MergeQueueEntry_line_idx`;
 * one more tells whether any was left out), with `front` the first `front` plain waiting ones set
 * aside or not (the same, and `MergeQueueEntry_aside_idx`), all in the state's order, and every batch.
 */
export async function assembleWindow(tx: Prisma.TransactionClient, row: MergeQueue, front: number): Promise<{ state: MergeQueueState; window: Window }> {
  const size = windowSize((row.plannerState as unknown as MergeQueueState).config);
  const [lists] = await tx.$queryRaw<{ entries: string; seqs: string; edge: string | null; frontEdge: string | null; batches: string }[]>`
    WITH "line" AS (
      SELECT "planner", "plannerSeq", "priority", "position", row_number() OVER (ORDER BY "priority" DESC, "position") AS "n"
      FROM (SELECT "planner", "plannerSeq", "priority", "position" FROM "MergeQueueEntry"
            WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL AND "plannerPlain" AND NOT "setAside"
            ORDER BY "priority" DESC, "position" LIMIT ${Math.max(size, front) + 1}) AS "head"
    ), "front" AS (
      SELECT "planner", "plannerSeq", "priority", "position", row_number() OVER (ORDER BY "priority" DESC, "position") AS "n"
      FROM (SELECT "planner", "plannerSeq", "priority", "position" FROM "line"
            UNION ALL
            (SELECT "planner", "plannerSeq", "priority", "position" FROM "MergeQueueEntry"
             WHERE ${front} > 0 AND "queueId" = ${row.id} AND "planner" IS NOT NULL AND "plannerPlain" AND "setAside"
             ORDER BY "priority" DESC, "position" LIMIT ${front + 1})) AS "both"
      WHERE ${front} > 0
    ), "win" AS (
      -- The head of the line and the front overlap: each entry once, by its place in the state's list.
      SELECT DISTINCT ON ("plannerSeq") "planner", "plannerSeq" FROM (
        SELECT "planner", "plannerSeq" FROM "MergeQueueEntry" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL AND NOT "plannerPlain"
        UNION ALL
        SELECT "planner", "plannerSeq" FROM "line" WHERE "n" <= ${size}
        UNION ALL
        SELECT "planner", "plannerSeq" FROM "front" WHERE "n" <= ${front}
      ) AS "parts"
      ORDER BY "plannerSeq"
    )
    SELECT
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "win")::text AS "entries",
      (SELECT coalesce(json_agg("plannerSeq" ORDER BY "plannerSeq"), '[]') FROM "win")::text AS "seqs",
      (SELECT json_build_object('priority', l."priority", 'position', l."position") FROM "line" l
        WHERE l."n" = ${size} AND EXISTS (SELECT 1 FROM "line" WHERE "n" = ${size + 1}))::text AS "edge",
      (SELECT json_build_object('priority', f."priority", 'position', f."position") FROM "front" f
        WHERE f."n" = ${front} AND EXISTS (SELECT 1 FROM "front" WHERE "n" = ${front + 1}))::text AS "frontEdge",
      (SELECT coalesce(json_agg("planner" ORDER BY "plannerSeq"), '[]') FROM "MergeQueueBatch" WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL)::text AS "batches"`;
  return {
    state: stateOf(row, JSON.parse(lists.entries) as EntryState[], JSON.parse(lists.batches) as BatchState[]),
    window: {
      edge: lists.edge === null ? null : (JSON.parse(lists.edge) as WindowEdge),
      frontEdge: lists.frontEdge === null ? null : (JSON.parse(lists.frontEdge) as WindowEdge),
      seqs: JSON.parse(lists.seqs) as number[],
    },
  };
}

/** The window with the entries named by id, or live by PR number, that it left out, in the state's order (and their places). */
export async function withNamedEntries(
  tx: Prisma.TransactionClient,
  row: MergeQueue,
  state: MergeQueueState,
  window: Window,
  { ids = [], numbers = [] }: { ids?: readonly string[]; numbers?: readonly number[] },
): Promise<{ state: MergeQueueState; window: Window }> {
  if (ids.length === 0 && numbers.length === 0) return { state, window };
  // Every entry left out is plain waiting, and therefore live.
  const found = await tx.$queryRaw<{ planner: EntryState; seq: bigint }[]>`
    SELECT "planner", "plannerSeq" AS "seq" FROM "MergeQueueEntry"
    WHERE "queueId" = ${row.id} AND "planner" IS NOT NULL AND "plannerPlain" AND ("id" = ANY(${ids}::text[]) OR "number" = ANY(${numbers}::int[]))`;
  const held = new Set(state.entries.map((e) => e.id));
  const added = found.filter((f) => !held.has(f.planner.id));
  if (added.length === 0) return { state, window };
  const all = [...state.entries.map((e, i) => ({ e, seq: window.seqs[i] })), ...added.map((f) => ({ e: f.planner, seq: Number(f.seq) }))].sort(
    (a, b) => a.seq - b.seq,
  );
  return { state: { ...state, entries: all.map((x) => x.e) }, window: { ...window, seqs: all.map((x) => x.seq) } };
}
