import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { MergeQueueBatch } from '@/generated/prisma/client';
import type { EntryView } from '../engine/store/queue-view';
import { FINAL_ENTRY_STATUSES } from '../planner';
import {
  ENTRY_PATHS_STATUSES,
  type EntryPathsStatus,
  LANES_DESCRIPTION,
  LANES_REASON_DESCRIPTION,
  MergeQueueBatchDto,
  MergeQueueEntryDto,
  MergeQueueEventDto,
  PATHS_STATUS_DESCRIPTION,
  toMergeQueueBatchDto,
  toMergeQueueEntryDto,
} from './merge-queue.dto';

/** Where an entry's title came from: the caller that added it, or GitHub (read by the worker, or by a label or comment enqueue). */
export const ENTRY_TITLE_SOURCES = ['request', 'github'] as const;
export type EntryTitleSource = (typeof ENTRY_TITLE_SOURCES)[number];

export const ENTRY_ORIGIN_VIAS = ['api', 'label', 'comment'] as const;
export const ENTRY_ORIGIN_ACTOR_KINDS = ['principal', 'github'] as const;

/** The most events the entry details show. */
export const ENTRY_DETAILS_EVENTS = 20;

/** How an entry came into the queue and who asked. */
export class MergeQueueEntryOriginDto {
  @ApiProperty({
    enum: ENTRY_ORIGIN_VIAS,
    description: "`api`: POST /merge-queues/{id}/entries; `label`: the queue's enqueue label on the PR; `comment`: a `/queue` comment",
  })
  via: string;
  @ApiProperty({ description: 'Who asked: the principal (user or service account id) for `api`, the GitHub login for a label or comment' })
  actor: string;
  @ApiProperty({ enum: ENTRY_ORIGIN_ACTOR_KINDS, description: '`principal`: an API caller of this organization; `github`: a GitHub account' })
  actorKind: string;
}

/** What an entry of the queue's lanes is (shared by the entry details and the chain). */
export interface EntryLanesView {
  lanes?: string[];
  pathsStatus?: EntryPathsStatus;
  lanesReason?: string;
}

/**
 * One entry as the queue's own resource shows it: the spec's MergeQueueEntry as it is, and beside it
 * what that closed object does not carry (how it came, its title's source, its lanes, its batch, the
 * events that concern it).
 */
export class MergeQueueEntryDetailsDto {
  @ApiProperty({ type: MergeQueueEntryDto, description: "The spec's MergeQueueEntry, exactly as GET /merge-queues/{id} lists it" })
  entry: MergeQueueEntryDto;
  @ApiProperty({
    type: MergeQueueEntryOriginDto,
    nullable: true,
    description: 'How the entry came and who asked; null for entries added before this was recorded',
  })
  origin: MergeQueueEntryOriginDto | null;
  @ApiProperty({ type: String, nullable: true, description: 'The title shown for the PR (as in `entry.title`); null when none is known' })
  title: string | null;
  @ApiProperty({
    enum: ENTRY_TITLE_SOURCES,
    nullable: true,
    description:
      "`request`: the title the caller gave when adding the entry (on a GitHub queue, until GitHub's is read); `github`: the PR's title as GitHub has it (read by the worker, and followed on `pull_request edited`). Null when there is no title",
  })
  titleSource: EntryTitleSource | null;
  @ApiPropertyOptional({ type: [String], description: LANES_DESCRIPTION }) lanes?: string[];
  @ApiPropertyOptional({ enum: ENTRY_PATHS_STATUSES, description: PATHS_STATUS_DESCRIPTION }) pathsStatus?: EntryPathsStatus;
  @ApiPropertyOptional({ description: LANES_REASON_DESCRIPTION }) lanesReason?: string;
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    description:
      'How many paths the PR changes as the provider listed them for `pathsHead`; absent when not known (never asked, or more than the provider lists)',
  })
  pathsCount?: number;
  @ApiPropertyOptional({ description: 'The head commit the changed paths were listed for; absent when they were never asked' }) pathsHead?: string;
  @ApiProperty({
    type: MergeQueueBatchDto,
    nullable: true,
    description: 'The batch the entry is in (as GET /merge-queues/{id} lists batches); null when it is in none',
  })
  batch: MergeQueueBatchDto | null;
  @ApiProperty({ format: 'date-time', description: 'When the entry was added' }) enqueuedAt: string;
  @ApiProperty({ format: 'date-time', description: 'When the entry last changed' }) updatedAt: string;
  @ApiProperty({
    type: [MergeQueueEventDto],
    description: `The queue's events that concern the entry, newest first, at most ${ENTRY_DETAILS_EVENTS}: those naming it (enqueue, head updates, the lanes of its head once known, priority, removal, title changes) and those that moved its status (a batch that landed or failed). The whole trail is GET /merge-queues/{id}/events`,
  })
  events: MergeQueueEventDto[];
}

/**
 * The same rule as the store's SQL (engine/store/entry-sql.ts): lanes count only when matched for
 * the head the entry is to be tested with under the queue's current groups. Reads no path.
 */
function pathsStatusOf(row: Pick<EntryView, 'planner' | 'headSha' | 'lanesHead' | 'pathsCount'>): EntryPathsStatus {
  const wanted = (row.planner as { pendingHeadSha?: string } | null)?.pendingHeadSha ?? row.headSha;
  if (row.lanesHead !== wanted) return 'pending';
  return row.pathsCount !== null ? 'listed' : 'unlisted';
}

/** An entry's lanes as the entry details and the chain show them (nothing when the queue has no path groups). */
export function entryLanesOf(row: Pick<EntryView, 'lanes' | 'lanesReason' | 'status' | 'planner' | 'headSha' | 'lanesHead' | 'pathsCount'>): EntryLanesView {
  if (!Array.isArray(row.lanes)) return {};
  return {
    lanes: row.lanes as string[],
    ...(!FINAL_ENTRY_STATUSES.includes(row.status) && { pathsStatus: pathsStatusOf(row) }),
    ...(row.lanesReason !== null && { lanesReason: row.lanesReason }),
  };
}

function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return (values as readonly unknown[]).includes(value);
}

/** The stored origin as shown, or null when there is none (or it is not one this version knows). */
function originOf(value: unknown): MergeQueueEntryOriginDto | null {
  const o = value as { via?: unknown; actor?: unknown; actorKind?: unknown } | null;
  if (!o || typeof o !== 'object') return null;
  if (!isOneOf(ENTRY_ORIGIN_VIAS, o.via) || typeof o.actor !== 'string' || !isOneOf(ENTRY_ORIGIN_ACTOR_KINDS, o.actorKind)) return null;
  return { via: o.via, actor: o.actor, actorKind: o.actorKind };
}

export function toMergeQueueEntryDetailsDto(row: EntryView, batch: MergeQueueBatch | null, events: MergeQueueEventDto[]): MergeQueueEntryDetailsDto {
  const titleSource = row.title === null ? null : isOneOf(ENTRY_TITLE_SOURCES, row.titleSource) ? row.titleSource : 'request';
  return {
    entry: toMergeQueueEntryDto(row),
    origin: originOf(row.origin),
    title: row.title,
    titleSource,
    ...entryLanesOf(row),
    ...(row.pathsCount !== null && { pathsCount: row.pathsCount }),
    ...(row.pathsHead !== null && { pathsHead: row.pathsHead }),
    batch: batch ? toMergeQueueBatchDto(batch) : null,
    enqueuedAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    events,
  };
}
