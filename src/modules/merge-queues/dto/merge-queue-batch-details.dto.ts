import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { MergeQueueBatch } from '@/generated/prisma/client';
import { batchRowId } from '../engine/ids';
import { type BatchHints, type BatchState, type CheckFailure, MAX_CHECK_FAILURES, MAX_FAIL_FIRST_TESTS } from '../planner';
import { BATCH_ROLES, MergeQueueBatchDto, toMergeQueueBatchDto } from './merge-queue.dto';

/** One failing test as CI named it (POST .../checks `failures`, JUnit, GitHub annotations), or as hinted to run first. */
export class MergeQueueBatchFailureDto {
  @ApiProperty({ description: 'The required check whose result named the test' }) check: string;
  @ApiProperty({ description: "The test's name as CI gave it" }) test: string;
  @ApiPropertyOptional({ description: 'Its build target, where CI said' }) target?: string;
  @ApiPropertyOptional({ description: 'Its file, where CI said' }) file?: string;
  @ApiPropertyOptional({ description: 'How it failed (`failure`, `error`, `timeout`...), where CI said' }) kind?: string;
}

/** A PR the candidate holds that is a suspect: a failed run held it and its culprit is not known yet. */
export class MergeQueueBatchSuspectDto {
  @ApiProperty({ description: 'The entry' }) entryId: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) number: number;
  @ApiProperty({ description: 'The batch the PR is in: this one, or one this candidate is built on' }) batchId: string;
  @ApiProperty({ type: [MergeQueueBatchFailureDto], description: 'The failing tests of the run that made it a suspect' })
  failures: MergeQueueBatchFailureDto[];
}

/**
 * One batch as the queue's own resource shows it: the spec's MergeQueueBatch as it is, and beside
 * it what that closed object does not carry (its role, what it is built on, the failing tests CI
 * named, the suspects it holds and the tests to run first).
 */
export class MergeQueueBatchDetailsDto {
  @ApiProperty({ type: MergeQueueBatchDto, description: "The spec's MergeQueueBatch, exactly as GET /merge-queues/{id} lists it" })
  batch: MergeQueueBatchDto;
  @ApiProperty({
    enum: BATCH_ROLES,
    nullable: true,
    description:
      "`chain`: a speculative candidate built on the batch ahead (or the base); `part`: an isolation probe of a failed batch (a solo run when it holds one PR), on the base; `screen`: a look-ahead screen of waiting PRs on the base, which never lands. Null once the queue's history no longer holds the batch (then every list below is empty)",
  })
  role: string | null;
  @ApiPropertyOptional({ description: 'The batch this candidate is built on; absent when it is built on the base (or no longer known)' }) parentId?: string;
  @ApiProperty({ type: String, nullable: true, description: 'The commit the candidate is built on; null until known' }) baseSha: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The candidate commit CI tests (`batch.headSha`); null until built' }) candidateSha: string | null;
  @ApiPropertyOptional({ format: 'date-time', description: 'When its CI started' }) ciStartedAt?: string;
  @ApiPropertyOptional({ description: 'Why it failed, readable; absent unless it failed' }) failureReason?: string;
  @ApiProperty({
    type: [String],
    description:
      'The entries whose changes the candidate holds that are not on the base (those of the batches it is built on, then its own): the PRs its CI tests',
  })
  holds: string[];
  @ApiProperty({
    type: [MergeQueueBatchFailureDto],
    description: `The failing tests CI named with its failing results for this candidate (at most ${MAX_CHECK_FAILURES} per result); empty when CI named none (pass/fail only)`,
  })
  failures: MergeQueueBatchFailureDto[];
  @ApiProperty({ description: 'CI named more failing tests than were kept' }) failuresTruncated: boolean;
  @ApiProperty({
    type: [MergeQueueBatchSuspectDto],
    description: 'The suspects the candidate holds (its own PRs and those of the batches it is built on), each with the failing tests that made it one',
  })
  suspects: MergeQueueBatchSuspectDto[];
  @ApiProperty({
    type: [MergeQueueBatchFailureDto],
    description: `Fail-first hints: the tests to run first, the suspects' failures each once in merge order, at most ${MAX_FAIL_FIRST_TESTS}; empty when the candidate holds no suspect. CI reads them by commit with GET /merge-queues/{id}/commits/{sha}/fail-first`,
  })
  failFirst: MergeQueueBatchFailureDto[];
}

/** The hints of one candidate commit, for CI. */
export class MergeQueueFailFirstDto {
  @ApiProperty({ description: 'The candidate commit' }) sha: string;
  @ApiProperty({ description: 'The batch whose candidate it is' }) batchId: string;
  @ApiProperty({
    type: [MergeQueueBatchFailureDto],
    description: `The tests to run first (as the batch details' \`failFirst\`), at most ${MAX_FAIL_FIRST_TESTS}; empty when the candidate holds no suspect`,
  })
  tests: MergeQueueBatchFailureDto[];
}

/** A failure as shown: its known fields only, in a fixed order. */
export function toFailureDto(f: CheckFailure): MergeQueueBatchFailureDto {
  return {
    check: f.check,
    test: f.test,
    ...(f.target !== undefined && { target: f.target }),
    ...(f.file !== undefined && { file: f.file }),
    ...(f.kind !== undefined && { kind: f.kind }),
  };
}

/** The details of a batch row, with the planner's part when the planner still holds it (and the hints computed from it). */
export function toMergeQueueBatchDetailsDto(
  queueId: string,
  row: MergeQueueBatch,
  planner: { batch: BatchState; hints: BatchHints } | null,
): MergeQueueBatchDetailsDto {
  const b = planner?.batch;
  return {
    batch: toMergeQueueBatchDto(row),
    role: b?.role ?? null,
    ...(b?.parentId != null && { parentId: batchRowId(queueId, b.parentId) }),
    baseSha: b?.baseSha ?? row.baseSha,
    candidateSha: b?.candidateSha ?? row.headSha,
    ...(b?.ciStartedAt != null && { ciStartedAt: new Date(b.ciStartedAt).toISOString() }),
    ...(b?.failureReason != null && { failureReason: b.failureReason }),
    holds: planner?.hints.holds ?? [],
    failures: (b?.failures ?? []).map(toFailureDto),
    failuresTruncated: b?.failuresTruncated ?? false,
    suspects: (planner?.hints.suspects ?? []).map((s) => ({
      entryId: s.entryId,
      number: s.number,
      batchId: batchRowId(queueId, s.batchId),
      failures: s.failures.map(toFailureDto),
    })),
    failFirst: (planner?.hints.failFirst ?? []).map(toFailureDto),
  };
}
