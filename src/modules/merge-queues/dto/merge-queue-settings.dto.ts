import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsString, Matches, ValidateIf, ValidateNested } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { IsOptionalNonNull } from '@/common/http/optional';
import {
  CHECK_SOURCE_KINDS,
  type CheckSourceKind,
  HEAD_PUSH_POLICIES,
  type HeadPushPolicy,
  LABEL_NAME,
  MERGE_METHODS,
  type MergeMethod,
  REQUIRED_CHECKS_FROM,
  type RequiredChecksFrom,
} from '../policy/queue-policy';

const CHECK_NAME = /^[\x21-\x7e][\x20-\x7e]{0,99}$/;
/** A GitHub App's id (digits) or slug. */
const APP = /^([0-9]{1,20}|[A-Za-z0-9][A-Za-z0-9-]{0,99})$/;

const SOURCE_DESCRIPTION =
  'Where the check must come from on a GitHub queue. `checkRun` (the default): check runs (of `app` when given, else of any app; only apps installed with the checks permission create them), never commit statuses. ' +
  '`status`: commit statuses only, the weaker choice (anyone with push access to the repository can post one). A check suite never counts (its payload names only its app). ' +
  'A result from another source is recorded in the events and changes nothing; `POST .../checks` reports count for every check except one bound to an app.';
const APP_DESCRIPTION = 'The GitHub App whose check runs alone count: its id (digits) or slug (e.g. `github-actions`). Only with `source: checkRun`';

export class RequiredCheckSettingDto {
  @ApiProperty({ description: 'The check name, as CI reports it', pattern: CHECK_NAME.source, maxLength: 100, example: 'ci' })
  name: string;
  @ApiProperty({ enum: CHECK_SOURCE_KINDS, description: SOURCE_DESCRIPTION })
  source: CheckSourceKind;
  @ApiPropertyOptional({ description: APP_DESCRIPTION, pattern: APP.source, example: 'github-actions' })
  app?: string;
}

export class RequiredCheckInputDto {
  @ApiProperty({ description: 'The check name, as CI reports it', pattern: CHECK_NAME.source, maxLength: 100, example: 'ci' })
  @IsString()
  @Matches(CHECK_NAME, { message: 'must be a printable check name of at most 100 characters' })
  name: string;
  @ApiPropertyOptional({ enum: CHECK_SOURCE_KINDS, default: 'checkRun', description: SOURCE_DESCRIPTION })
  @IsOptionalNonNull()
  @IsIn(CHECK_SOURCE_KINDS)
  source?: CheckSourceKind;
  @ApiPropertyOptional({ description: APP_DESCRIPTION, pattern: APP.source, example: 'github-actions' })
  @IsOptionalNonNull()
  @IsString()
  @Matches(APP, { message: 'must be a GitHub App id (digits) or slug' })
  app?: string;
}

const ON_HEAD_PUSH_DESCRIPTION =
  'What a push to a queued PR (GitHub `pull_request synchronize`) does. `remove`: the entry ends `removed` ("removed: new commits were pushed"). ' +
  "`requeueIfApproved`: it is queued again with the new head only when GitHub's review decision on the new head is APPROVED, else removed. The old head never lands: its batch is withdrawn (a land no executor has started included)";
const SKIPPED_DESCRIPTION =
  'Count `skipped` and `neutral` check runs as passing, as GitHub does. Default false: the candidate waits for a real result until the check timeout, then fails "skipped on the candidate"';

const MERGE_METHOD_DESCRIPTION =
  'How a batch lands on the base, on every provider. `merge` (the default): one merge commit per PR, as today. `squash`: one commit per PR, its message as GitHub writes it ' +
  "(the PR title and `(#N)`, then its commits' co-authors). `rebase`: the PR's commits replayed on the base. In every method the tree that lands is exactly the tree CI tested, PRs land in queue order, and the fence rules hold. On GitHub a squashed or rebased PR is closed with a comment naming its landed commits (GitHub cannot see them as its merge)";
const ENQUEUE_LABEL_DESCRIPTION =
  'A label that enqueues a PR on a GitHub queue when someone with write permission adds it; removing it dequeues. null (the default): labels do nothing';
const COMMENT_COMMANDS_DESCRIPTION = '`/queue` and `/dequeue` comments on a PR of a GitHub queue, accepted from someone with write permission (default true)';
const REQUIRE_APPROVAL_DESCRIPTION =
  "A PR enqueued from GitHub (label or comment) must have GitHub's review decision APPROVED on its head (default true). API enqueues are not affected";
const REQUIRED_CHECKS_FROM_DESCRIPTION =
  "Where the required checks come from. `settings` (the default): `requiredChecks` as set here. `branchProtection`: the base branch's protection rules and rulesets on GitHub " +
  "(each check's name and the app GitHub expects to send it), read when set, refreshed on `branch_protection_rule` and `repository_ruleset` webhooks and on demand";

/** A queue's own settings beyond the planner's tunables (which stay on PATCH /merge-queues/{id}). */
export class MergeQueueSettingsDto {
  @ApiProperty({ type: [RequiredCheckSettingDto], description: 'The required checks and where each must come from' })
  requiredChecks: RequiredCheckSettingDto[];
  @ApiProperty({ enum: HEAD_PUSH_POLICIES, description: ON_HEAD_PUSH_DESCRIPTION })
  onHeadPush: HeadPushPolicy;
  @ApiProperty({ description: SKIPPED_DESCRIPTION })
  skippedPasses: boolean;
  @ApiProperty({ enum: MERGE_METHODS, description: MERGE_METHOD_DESCRIPTION })
  mergeMethod: MergeMethod;
  @ApiProperty({ type: String, nullable: true, description: ENQUEUE_LABEL_DESCRIPTION, example: 'ready to merge' })
  enqueueLabel: string | null;
  @ApiProperty({ description: COMMENT_COMMANDS_DESCRIPTION })
  commentCommands: boolean;
  @ApiProperty({ description: REQUIRE_APPROVAL_DESCRIPTION })
  requireApproval: boolean;
  @ApiProperty({ enum: REQUIRED_CHECKS_FROM, description: REQUIRED_CHECKS_FROM_DESCRIPTION })
  requiredChecksFrom: RequiredChecksFrom;
}

export class UpdateMergeQueueSettingsDto {
  @ApiPropertyOptional({
    type: [RequiredCheckInputDto],
    minItems: 1,
    maxItems: 20,
    description:
      'Replaces the required checks and their sources (names distinct). New names withdraw the batches not already landing, as `requiredChecks` on PATCH /merge-queues/{id}',
  })
  @IsOptionalNonNull()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => RequiredCheckInputDto)
  requiredChecks?: RequiredCheckInputDto[];
  @ApiPropertyOptional({ enum: HEAD_PUSH_POLICIES, default: 'remove', description: ON_HEAD_PUSH_DESCRIPTION })
  @IsOptionalNonNull()
  @IsIn(HEAD_PUSH_POLICIES)
  onHeadPush?: HeadPushPolicy;
  @ApiPropertyOptional({ default: false, description: SKIPPED_DESCRIPTION })
  @IsOptionalNonNull()
  @IsBoolean()
  skippedPasses?: boolean;
  @ApiPropertyOptional({ enum: MERGE_METHODS, default: 'merge', description: MERGE_METHOD_DESCRIPTION })
  @IsOptionalNonNull()
  @IsIn(MERGE_METHODS)
  mergeMethod?: MergeMethod;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: LABEL_NAME.source,
    maxLength: 50,
    description: `${ENQUEUE_LABEL_DESCRIPTION}; null turns labels off`,
  })
  @ValidateIf((_, v) => v !== null && v !== undefined)
  @IsString()
  @Matches(LABEL_NAME, { message: 'must be a GitHub label name of 1 to 50 characters' })
  enqueueLabel?: string | null;
  @ApiPropertyOptional({ default: true, description: COMMENT_COMMANDS_DESCRIPTION })
  @IsOptionalNonNull()
  @IsBoolean()
  commentCommands?: boolean;
  @ApiPropertyOptional({ default: true, description: REQUIRE_APPROVAL_DESCRIPTION })
  @IsOptionalNonNull()
  @IsBoolean()
  requireApproval?: boolean;
  @ApiPropertyOptional({ enum: REQUIRED_CHECKS_FROM, default: 'settings', description: REQUIRED_CHECKS_FROM_DESCRIPTION })
  @IsOptionalNonNull()
  @IsIn(REQUIRED_CHECKS_FROM)
  requiredChecksFrom?: RequiredChecksFrom;
}

/** The settings a queue may be created with (its required check names stay `requiredChecks` of the create body). */
export class CreateMergeQueueSettingsDto extends OmitType(UpdateMergeQueueSettingsDto, ['requiredChecks'] as const) {}

export class UpdateMergeQueueSettingsRequest extends RequestEnvelope(UpdateMergeQueueSettingsDto) {}
