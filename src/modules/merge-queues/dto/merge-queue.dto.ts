import { ApiProperty, ApiPropertyOptional, OmitType, PartialType, PickType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  IsUrl,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { IsOptionalNonNull } from '@/common/http/optional';
import type { CodeSource, MergeQueue, MergeQueueBatch, MergeQueueEvent } from '@/generated/prisma/client';
import type { EntryView } from '../engine/store/queue-view';
import { ROW_ID } from '@/common/http/row-id';
import {
  MERGE_QUEUE_BATCH_STATUSES,
  MERGE_QUEUE_CHECK_STATES,
  MERGE_QUEUE_ENTRY_STATUSES,
  MERGE_QUEUE_OPERATION_KINDS,
  MERGE_QUEUE_OPERATION_OUTCOMES,
  MERGE_QUEUE_STATUSES,
  MAX_CHECK_FAILURES,
  MAX_GROUP_PATTERNS,
  MAX_PATH_GROUPS,
  MAX_PATTERN_LENGTH,
  type MergeQueueCheckState,
  PATH_GROUP_NAME,
} from '../planner';
import { CreateMergeQueueSettingsDto } from './merge-queue-settings.dto';

/** A batch's role in the planner (BatchRole). */
export const BATCH_ROLES = ['chain', 'part', 'screen'] as const;

/** A full commit id (sha-1 or sha-256). */
export const GIT_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const REF_NAME = /^(?!.*\.\.)(?!.*\/\/)(?!\/)(?!.*\/$)(?!.*\.lock$)[A-Za-z0-9._\/-]{1,200}$/;
const CHECK_NAME = /^[\x21-\x7e][\x20-\x7e]{0,99}$/;
/** Links people click in a UI or a terminal: http(s) only (never `javascript:`, `data:`, `file:`...). */
const WEB_URL = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };
const WEB_URL_MESSAGE = { message: 'must be an http or https URL' };

/** One lane of the queue: a name and the paths it owns. */
export class PathGroupDto {
  @ApiProperty({ description: 'The lane name, unique in the queue', pattern: PATH_GROUP_NAME.source, example: 'api' })
  @IsString()
  @Matches(PATH_GROUP_NAME, { message: 'must be a lowercase slug of at most 40 characters' })
  name: string;
  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: MAX_GROUP_PATTERNS,
    description:
      'Glob patterns over repository-relative paths (`*`, `**`, `?`, `{a,b}`; dot files included); a pattern ending in `/` is everything under that directory. No leading `/`, no `!` negation, no `.` or `..` segments',
    example: ['services/api/', 'libs/api-client/**'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_GROUP_PATTERNS)
  @IsString({ each: true })
  @Length(1, MAX_PATTERN_LENGTH, { each: true })
  paths: string[];
}

export class CreateMergeQueueDto {
  @ApiProperty({ description: 'The code source (repository) whose base ref the queue lands on', pattern: ROW_ID.source })
  @IsString()
  @Matches(ROW_ID, { message: 'must be a code source id' })
  codeSourceId: string;
  @ApiProperty({ description: 'The branch PRs land on, e.g. `main` (or a full `refs/heads/...` ref); it must exist', maxLength: 200, example: 'main' })
  @IsString()
  @Matches(REF_NAME, { message: 'must be a git branch name' })
  baseRef: string;
  @ApiPropertyOptional({
    type: [String],
    minItems: 1,
    maxItems: 20,
    description:
      'Checks that must all report `success` on a candidate before it lands. Required, except with `settings.requiredChecksFrom: branchProtection`, ' +
      "where the checks are read from GitHub (the base branch's protection rule and rulesets) and this field is refused",
    example: ['ci'],
  })
  // Required unless the checks come from GitHub (the service refuses it given then).
  @ValidateIf(
    (o: { settings?: { requiredChecksFrom?: unknown }; requiredChecks?: unknown }) =>
      o.settings?.requiredChecksFrom !== 'branchProtection' || o.requiredChecks !== undefined,
  )
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ArrayUnique()
  @IsString({ each: true })
  @Matches(CHECK_NAME, { each: true, message: 'each must be a printable check name of at most 100 characters' })
  requiredChecks?: string[];
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 64, default: 1 }) @IsOptionalNonNull() @IsInt() @Min(1) @Max(64) minBatch?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 64, default: 16, description: 'At least minBatch' })
  @IsOptionalNonNull()
  @IsInt()
  @Min(1)
  @Max(64)
  maxBatch?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 32, default: 4, description: 'Candidates under test at once' })
  @IsOptionalNonNull()
  @IsInt()
  @Min(1)
  @Max(32)
  maxParallel?: number;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 604800,
    default: 18000,
    description: 'A required check still pending this long after CI started counts as failed',
  })
  @IsOptionalNonNull()
  @IsInt()
  @Min(1)
  @Max(604800)
  checkTimeoutSeconds?: number;
  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 0,
    maximum: 5,
    default: null,
    description:
      'The fixed flaky budget: extra solo runs a PR gets after failing alone before it fails. null (the default): blame by posterior instead, from the flake history of the failing tests, at most two solo runs per head (docs/merge-queue.md, "Blame"); null on PATCH goes back to it',
  })
  @ValidateIf((_, v) => v !== null && v !== undefined)
  @IsInt()
  @Min(0)
  @Max(5)
  flakyRetries?: number | null;
  @ApiPropertyOptional({
    type: 'boolean',
    default: true,
    description:
      'Look-ahead screening: runners that neither the chain nor a bisection can use test waiting PRs on the base (they never land), so bad PRs are found before they reach the chain. More CI runs, higher throughput under load; false turns it off',
  })
  @IsOptionalNonNull()
  @IsBoolean()
  screening?: boolean;
  @ApiPropertyOptional({
    type: [PathGroupDto],
    maxItems: MAX_PATH_GROUPS,
    description:
      'Path groups, one lane each: every entry\'s `lanes` are the groups its PR\'s changed paths touch (from the provider: `git diff --name-only` on a local repository, the compare API on GitHub). A PR with a path outside every group, or whose paths the provider could not list in full, is in every lane. Empty or absent: the queue is one line. The planner still runs one chain; the lanes of a PR, once its paths are known, are the default source of its targets when blame weighs a failing test (docs/merge-queue.md, "Lanes")',
  })
  @IsOptionalNonNull()
  @IsArray()
  @ArrayMaxSize(MAX_PATH_GROUPS)
  @ValidateNested({ each: true })
  @Type(() => PathGroupDto)
  pathGroups?: PathGroupDto[];
  @ApiPropertyOptional({
    type: () => CreateMergeQueueSettingsDto,
    description:
      "The queue's own settings (GET/PATCH /merge-queues/{id}/settings) to start with: mergeMethod, enqueueLabel, commentCommands, requireApproval, requiredChecksFrom, onHeadPush, skippedPasses",
  })
  @IsOptionalNonNull()
  @ValidateNested()
  @Type(() => CreateMergeQueueSettingsDto)
  settings?: CreateMergeQueueSettingsDto;
}

export class CreateMergeQueueRequest extends RequestEnvelope(CreateMergeQueueDto) {}

/**
 * Settings a queue's operator may change. A new `baseRef` sends the queue through `migrating`: a
 * land already in flight finishes on the old ref, then the worker moves the queue to the new one
 * and everything not yet landed is planned again on it.
 */
export class UpdateMergeQueueDto extends PartialType(OmitType(CreateMergeQueueDto, ['codeSourceId'] as const), { skipNullProperties: false }) {}

export class UpdateMergeQueueRequest extends RequestEnvelope(UpdateMergeQueueDto) {}

export class CreateMergeQueueEntryDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 2147483647, description: 'The pull request number' }) @IsInt() @Min(1) @Max(2147483647) number: number;
  @ApiProperty({ description: 'The head commit to merge', pattern: GIT_SHA.source })
  @IsString()
  @Matches(GIT_SHA, { message: 'must be a full commit id' })
  headSha: string;
  @ApiProperty({ maxLength: 2000, format: 'uri', pattern: '^https?://', description: 'Where people see the pull request (http or https)' })
  @IsString()
  @Length(1, 2000)
  @IsUrl(WEB_URL, WEB_URL_MESSAGE)
  url: string;
  @ApiPropertyOptional({ maxLength: 500 }) @IsOptionalNonNull() @IsString() @MaxLength(500) title?: string;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: -1000,
    maximum: 1000,
    default: 0,
    description: 'Higher plans first; 100 or more is urgent (jumps the queue)',
  })
  @IsOptionalNonNull()
  @IsInt()
  @Min(-1000)
  @Max(1000)
  priority?: number;
}

export class CreateMergeQueueEntryRequest extends RequestEnvelope(CreateMergeQueueEntryDto) {}

export class UpdateMergeQueueEntryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: -1000, maximum: 1000 }) @IsOptionalNonNull() @IsInt() @Min(-1000) @Max(1000) priority?: number;
  @ApiPropertyOptional({ description: 'Keep the entry queued but skip it; a batch holding it that is not landing is withdrawn' })
  @IsOptionalNonNull()
  @IsBoolean()
  setAside?: boolean;
  @ApiPropertyOptional({ description: 'A new head commit: the entry is tested again from scratch (and unblocked)', pattern: GIT_SHA.source })
  @IsOptionalNonNull()
  @IsString()
  @Matches(GIT_SHA, { message: 'must be a full commit id' })
  headSha?: string;
}

export class UpdateMergeQueueEntryRequest extends RequestEnvelope(UpdateMergeQueueEntryDto) {}

const REPORTABLE_CHECK_STATES = MERGE_QUEUE_CHECK_STATES;

/**
 * The most failing tests one report may carry (within the body's key limit, BODY_MAX_KEYS, 1,000 by
 * default: four fields each); the queue keeps the first MAX_CHECK_FAILURES of them.
 */
export const MAX_REPORTED_FAILURES = 200;
export const MAX_FAILURE_TEST_LENGTH = 500;
export const MAX_FAILURE_TARGET_LENGTH = 200;
export const MAX_FAILURE_FILE_LENGTH = 500;
export const MAX_FAILURE_KIND_LENGTH = 50;

export class ReportedFailureDto {
  @ApiProperty({
    description: 'The failing test, as CI names it (e.g. `suite > case`, a JUnit `classname.name`)',
    maxLength: MAX_FAILURE_TEST_LENGTH,
    example: 'login > rejects a bad password',
  })
  @IsString()
  @Length(1, MAX_FAILURE_TEST_LENGTH)
  test: string;
  @ApiPropertyOptional({ description: 'The build target that ran it (e.g. a Bazel label)', maxLength: MAX_FAILURE_TARGET_LENGTH })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, MAX_FAILURE_TARGET_LENGTH)
  target?: string;
  @ApiPropertyOptional({ description: 'The file the test is in', maxLength: MAX_FAILURE_FILE_LENGTH })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, MAX_FAILURE_FILE_LENGTH)
  file?: string;
  @ApiPropertyOptional({ description: 'How it failed: `failure`, `error`, `timeout`, ... as CI says', maxLength: MAX_FAILURE_KIND_LENGTH })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, MAX_FAILURE_KIND_LENGTH)
  kind?: string;
}

export class ReportCheckDto {
  @ApiProperty({ description: "One of the queue's required checks", maxLength: 100 }) @IsString() @Length(1, 100) name: string;
  @ApiProperty({ enum: REPORTABLE_CHECK_STATES }) @IsIn(REPORTABLE_CHECK_STATES) state: MergeQueueCheckState;
  @ApiProperty({ description: "The candidate commit CI tested (the batch's `headSha` when CI started)", pattern: GIT_SHA.source })
  @IsString()
  @Matches(GIT_SHA, { message: 'must be a full commit id' })
  sha: string;
  @ApiPropertyOptional({
    maxLength: 2000,
    format: 'uri',
    pattern: '^https?://',
    description: "The CI run's page (http or https); shown as the batch's checksUrl",
  })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, 2000)
  @IsUrl(WEB_URL, WEB_URL_MESSAGE)
  url?: string;
  @ApiPropertyOptional({
    type: [ReportedFailureDto],
    maxItems: MAX_REPORTED_FAILURES,
    description:
      `With state \`failure\` only: the failing tests (evidence the queue weighs, never blame alone). The first ${MAX_CHECK_FAILURES} distinct tests are kept; ` +
      'more set `failuresTruncated`. Not shown in the batch (its checks are `{name, state}`). A 400 with any other state',
  })
  @IsOptionalNonNull()
  @IsArray()
  @ArrayMaxSize(MAX_REPORTED_FAILURES)
  @ValidateNested({ each: true })
  @Type(() => ReportedFailureDto)
  failures?: ReportedFailureDto[];
  @ApiPropertyOptional({ description: 'With state `failure` only: CI found more failing tests than `failures` lists' })
  @IsOptionalNonNull()
  @IsBoolean()
  failuresTruncated?: boolean;
}

export class ReportCheckRequest extends RequestEnvelope(ReportCheckDto) {}

/** Where a JUnit report goes (POST .../checks/junit): the check and the commit, in the query; the report is the body. */
export class ReportJunitQueryDto extends PickType(ReportCheckDto, ['name', 'sha', 'url'] as const) {}

export class MergeQueueCheckDto {
  @ApiProperty() name: string;
  @ApiProperty({ enum: MERGE_QUEUE_CHECK_STATES }) state: string;
}

export class MergeQueueOperationDto {
  @ApiProperty({ enum: MERGE_QUEUE_OPERATION_KINDS }) kind: string;
  @ApiProperty({ enum: MERGE_QUEUE_OPERATION_OUTCOMES }) outcome: string;
}

export class MergeQueueBatchDto {
  @ApiProperty({ description: 'Immutable candidate id' }) id: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) position: number;
  @ApiProperty({ type: 'integer', format: 'int32', isArray: true }) prNumbers: number[];
  @ApiProperty({ enum: MERGE_QUEUE_BATCH_STATUSES }) status: string;
  @ApiProperty({ type: [MergeQueueCheckDto], description: 'Required checks on the candidate commit as the scheduler evaluates them' })
  requiredChecks: MergeQueueCheckDto[];
  @ApiPropertyOptional() checksUrl?: string;
  @ApiPropertyOptional({ description: 'The candidate commit, once built' }) headSha?: string;
  @ApiPropertyOptional({ type: MergeQueueOperationDto, description: 'Latest unfinished operation' }) operation?: MergeQueueOperationDto;
}

export class MergeQueueEntryDto {
  @ApiProperty({ description: 'Durable admission lifecycle id' }) id: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) number: number;
  @ApiProperty() headSha: string;
  @ApiProperty() url: string;
  @ApiProperty({ enum: MERGE_QUEUE_ENTRY_STATUSES }) status: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) position: number;
  @ApiProperty({ type: 'integer', format: 'int32' }) priority: number;
  @ApiProperty() setAside: boolean;
  @ApiPropertyOptional() batchId?: string;
  @ApiPropertyOptional({
    description:
      'Why the entry is blocked (a merge conflict), or why it waits while its queue stopped by itself (a land the provider refused, a quarantine: the queue is `paused`; cleared on resume), readable',
  })
  block?: string;
  @ApiPropertyOptional({
    description:
      "The PR's title. On a GitHub queue it is the title GitHub has (read by the worker after the entry is added, and again on every `pull_request edited`); until then the title the caller gave. Elsewhere, the title as given",
  })
  title?: string;
}

export class MergeQueueDto {
  @ApiProperty({ description: 'Durable queue id' }) id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() repositoryId: string;
  @ApiProperty({ description: 'The repository (owner/name)' }) repository: string;
  @ApiProperty() baseRef: string;
  @ApiProperty({ pattern: '^(0|[1-9][0-9]*)$', description: 'Counts state changes; never resets' }) revision: string;
  @ApiProperty({
    enum: MERGE_QUEUE_STATUSES,
    description:
      "`paused` also when the queue stopped by itself: the provider refused a land for good, or the worker quarantined it after failures in a row. The reason is in the event trail and on the affected entries' `block` (and in `hold` of GET /merge-queues/{id}/chain); resume clears it.",
  })
  status: string;
  @ApiProperty({ type: 'integer', format: 'int32', description: 'Current adaptive batch size' }) batchDepth: number;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({
    type: [MergeQueueEntryDto],
    description: 'Live entries (queued, testing, blocked, merging) and the 20 most recent final ones (merged, removed, failed)',
  })
  entries: MergeQueueEntryDto[];
  @ApiProperty({ type: [MergeQueueBatchDto], description: 'Live batches and the 20 most recent final ones (landed, failed, withdrawn)' })
  batches: MergeQueueBatchDto[];
}

export class MergeQueueTransitionDto {
  @ApiProperty({ enum: ['queue', 'batch', 'entry'] }) subject: string;
  @ApiProperty({ description: "'queue', or the batch or entry id" }) id: string;
  @ApiProperty() from: string;
  @ApiProperty() to: string;
}

export class MergeQueueIssuedOperationDto {
  @ApiProperty({ description: "The planner's operation id" }) id: string;
  @ApiProperty({ enum: MERGE_QUEUE_OPERATION_KINDS }) kind: string;
  @ApiProperty() batchId: string;
}

export class MergeQueueEventDto {
  @ApiProperty() id: string;
  @ApiProperty() queueId: string;
  @ApiProperty({ pattern: '^(0|[1-9][0-9]*)$', description: 'The queue revision after the event (unchanged when the event changed nothing)' }) revision: string;
  @ApiProperty({
    description:
      'The planner event: enqueue, pause, checkReported, operationSucceeded, ...; `landRefused` (the provider refused a land for good) and `quarantined` (the worker gave up after failures in a row) stop the queue, with the reason in `detail.reason`',
  })
  type: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Facts of the event: ids, the operation answered, the reason' }) detail: Record<
    string,
    unknown
  >;
  @ApiProperty({ type: [MergeQueueTransitionDto], description: 'Status steps the event caused, in order' }) transitions: MergeQueueTransitionDto[];
  @ApiProperty({ type: [MergeQueueIssuedOperationDto], description: 'Operations the event issued' }) operations: MergeQueueIssuedOperationDto[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

/** Where a live entry's lanes come from (`pathsStatus` in the entry details and the chain). */
export const ENTRY_PATHS_STATUSES = ['listed', 'pending', 'unlisted'] as const;
export type EntryPathsStatus = (typeof ENTRY_PATHS_STATUSES)[number];

export const LANES_DESCRIPTION =
  "The queue's lanes (path groups) this PR's changed paths touch, in the groups' order; every lane when a path is outside every group or the paths are not known (yet: the worker asks those of PRs queued before the groups). Absent when the queue has no path groups; a final entry keeps the lanes it had when it left the line";
export const PATHS_STATUS_DESCRIPTION =
  "Where its `lanes` come from: `listed` (the PR's changed paths as the provider listed them for the head it is to be tested with), `pending` (not asked for that head yet: every lane until the worker asks; the paths sweep asks again when a job was lost), `unlisted` (the provider could not list them in full, a PR of 300 files or more on GitHub: every lane). Absent when the queue has no path groups, and for a final entry";
export const LANES_REASON_DESCRIPTION =
  'Why the PR is in every lane when it is for want of knowing better, readable: a path in no group, a path longer or deeper than the limits matched, matching that took longer than its deadline, or a list of paths the provider cut short (docs/merge-queue.md, "Lanes"). Absent otherwise';

/** An entry of a batch as the chain lists it. */
export class MergeQueueChainEntryDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) number: number;
  @ApiPropertyOptional() title?: string;
  @ApiPropertyOptional({ type: [String], description: LANES_DESCRIPTION }) lanes?: string[];
  @ApiPropertyOptional({ enum: ENTRY_PATHS_STATUSES, description: PATHS_STATUS_DESCRIPTION }) pathsStatus?: EntryPathsStatus;
  @ApiPropertyOptional({ description: LANES_REASON_DESCRIPTION }) lanesReason?: string;
}

export class MergeQueueChainBatchDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) position: number;
  @ApiProperty({
    enum: BATCH_ROLES,
    description:
      '`chain`: a speculative candidate built on the batch ahead (or the base); `part`: an isolation probe of a failed batch, on the base; `screen`: a look-ahead screen of waiting PRs on the base, on a runner nothing else could use; it never lands',
  })
  role: string;
  @ApiPropertyOptional({ description: 'The live batch this candidate is built on; absent when it is built on the base' }) parentId?: string;
  @ApiProperty({ type: 'integer', format: 'int32', isArray: true }) prNumbers: number[];
  @ApiProperty({ enum: MERGE_QUEUE_BATCH_STATUSES }) status: string;
  @ApiProperty({ type: [MergeQueueCheckDto] }) requiredChecks: MergeQueueCheckDto[];
  @ApiPropertyOptional() checksUrl?: string;
  @ApiPropertyOptional() headSha?: string;
  @ApiPropertyOptional({ type: MergeQueueOperationDto }) operation?: MergeQueueOperationDto;
  @ApiProperty({ format: 'date-time', description: 'When the batch was planned' }) createdAt: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'When its CI started' }) ciStartedAt?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'When it is expected to land (from the observed CI duration and failure rate)' })
  estimatedLandAt?: string;
  @ApiPropertyOptional({ type: [String], description: "The lanes its PRs are in, in the groups' order (absent when the queue has no path groups)" })
  lanes?: string[];
  @ApiPropertyOptional({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    description: 'How many tests its CI should run first (fail-first hints: the batch details list them); absent when it holds no suspect',
  })
  failFirst?: number;
  @ApiProperty({ type: [MergeQueueChainEntryDto], description: "Its PRs' entries, in the batch's order, each with its lanes when the queue has path groups" })
  entries: MergeQueueChainEntryDto[];
}

export class MergeQueueWaitingEntryDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) number: number;
  @ApiPropertyOptional() title?: string;
  @ApiProperty({ enum: MERGE_QUEUE_ENTRY_STATUSES }) status: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) priority: number;
  @ApiProperty() setAside: boolean;
  @ApiPropertyOptional() block?: string;
  @ApiProperty({ format: 'date-time' }) enqueuedAt: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Expected merge time; absent for blocked and set-aside entries (they wait on a person)' })
  estimatedMergeAt?: string;
  @ApiPropertyOptional({ type: [String], description: LANES_DESCRIPTION }) lanes?: string[];
  @ApiPropertyOptional({ enum: ENTRY_PATHS_STATUSES, description: PATHS_STATUS_DESCRIPTION }) pathsStatus?: EntryPathsStatus;
  @ApiPropertyOptional({ description: LANES_REASON_DESCRIPTION }) lanesReason?: string;
}

/** Why a queue stopped by itself (it is `paused` until resumed). */
export class MergeQueueHoldDto {
  @ApiProperty({
    enum: ['landRefused', 'quarantined'],
    description:
      '`landRefused`: the provider refused a land for a reason that waiting will not change (a protected branch, a missing permission, a deleted base ref); `quarantined`: the worker gave up after MERGE_QUEUE_QUARANTINE_AFTER failures in a row (or a refusal of another operation). Resuming the queue clears it.',
  })
  kind: string;
  @ApiProperty({ description: "The reason, as the provider or the worker gave it (also in the event trail and on the affected entries' `block`)" })
  reason: string;
  @ApiProperty({ format: 'date-time' }) since: string;
  @ApiProperty({ type: [Number], description: 'The PRs whose entries carry the reason in `block`' }) prNumbers: number[];
}

/** A queue as people look at it: the chain in landing order and the entries waiting, with estimates. */
export class MergeQueueChainDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'The repository (owner/name)' }) repository: string;
  @ApiProperty() baseRef: string;
  @ApiPropertyOptional({ description: 'The base ref the queue is moving to (status `migrating`)' }) pendingBaseRef?: string;
  @ApiProperty({ description: 'The base commit the planner builds on' }) baseSha: string;
  @ApiProperty({ enum: MERGE_QUEUE_STATUSES }) status: string;
  @ApiPropertyOptional({ type: MergeQueueHoldDto, description: 'Set while the queue stopped by itself (status `paused`), with the reason' })
  hold?: MergeQueueHoldDto;
  @ApiProperty({ pattern: '^(0|[1-9][0-9]*)$' }) revision: string;
  @ApiProperty({ type: 'integer', format: 'int32' }) batchDepth: number;
  @ApiProperty({ type: 'integer', format: 'int32' }) maxParallel: number;
  @ApiProperty({ type: [PathGroupDto], description: "The queue's path groups, one lane each (empty: one line)" }) pathGroups: PathGroupDto[];
  @ApiProperty({ type: 'integer', format: 'int64', description: 'Observed CI duration (EWMA), milliseconds' }) ciDurationMs: number;
  @ApiProperty({ format: 'date-time' }) now: string;
  @ApiProperty({ type: [MergeQueueChainBatchDto], description: 'Live batches, in the order they land' }) batches: MergeQueueChainBatchDto[];
  @ApiProperty({ type: [MergeQueueWaitingEntryDto], description: 'Entries not in a batch (queued, blocked), in planning order: priority, then arrival' })
  waiting: MergeQueueWaitingEntryDto[];
}

export function toMergeQueueDto(row: MergeQueue & { repository: CodeSource }, entries: EntryView[], batches: MergeQueueBatch[]): MergeQueueDto {
  return {
    id: row.id,
    organizationId: row.organizationId,
    repositoryId: row.repositoryId,
    repository: row.repository.nameWithOwner,
    baseRef: row.baseRef,
    revision: row.revision.toString(),
    status: row.status,
    batchDepth: row.batchDepth,
    updatedAt: row.updatedAt.toISOString(),
    entries: entries.map(toMergeQueueEntryDto),
    batches: batches.map(toMergeQueueBatchDto),
  };
}

export function toMergeQueueEntryDto(row: EntryView): MergeQueueEntryDto {
  const dto: MergeQueueEntryDto = {
    id: row.id,
    number: row.number,
    headSha: row.headSha,
    url: row.url,
    status: row.status,
    position: row.position,
    priority: row.priority,
    setAside: row.setAside,
  };
  if (row.batchId !== null) dto.batchId = row.batchId;
  if (row.block !== null) dto.block = row.block;
  if (row.title !== null) dto.title = row.title;
  return dto;
}

export function toMergeQueueBatchDto(row: MergeQueueBatch): MergeQueueBatchDto {
  const dto: MergeQueueBatchDto = {
    id: row.id,
    position: row.position,
    prNumbers: row.prNumbers,
    status: row.status,
    requiredChecks: row.requiredChecks as unknown as MergeQueueCheckDto[],
  };
  if (row.checksUrl !== null) dto.checksUrl = row.checksUrl;
  if (row.headSha !== null) dto.headSha = row.headSha;
  if (row.operationKind !== null && row.operationOutcome !== null) dto.operation = { kind: row.operationKind, outcome: row.operationOutcome };
  return dto;
}

export function toMergeQueueEventDto(row: MergeQueueEvent): MergeQueueEventDto {
  return {
    id: row.id,
    queueId: row.queueId,
    revision: row.revision.toString(),
    type: row.type,
    detail: row.detail as Record<string, unknown>,
    transitions: row.transitions as unknown as MergeQueueTransitionDto[],
    operations: row.operations as unknown as MergeQueueIssuedOperationDto[],
    createdAt: row.createdAt.toISOString(),
  };
}
