import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsString, Matches, ValidateNested } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { IsOptionalNonNull } from '@/common/http/optional';
import { CHECK_SOURCE_KINDS, type CheckSourceKind, HEAD_PUSH_POLICIES, type HeadPushPolicy } from '../policy/queue-policy';

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

/** A queue's own settings beyond the planner's tunables (which stay on PATCH /merge-queues/{id}). */
export class MergeQueueSettingsDto {
  @ApiProperty({ type: [RequiredCheckSettingDto], description: 'The required checks and where each must come from' })
  requiredChecks: RequiredCheckSettingDto[];
  @ApiProperty({ enum: HEAD_PUSH_POLICIES, description: ON_HEAD_PUSH_DESCRIPTION })
  onHeadPush: HeadPushPolicy;
  @ApiProperty({ description: SKIPPED_DESCRIPTION })
  skippedPasses: boolean;
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
}

export class UpdateMergeQueueSettingsRequest extends RequestEnvelope(UpdateMergeQueueSettingsDto) {}
