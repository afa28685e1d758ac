import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { IsOptionalNonNull } from '@/common/http/optional';
import type { MergeQueueViewLink } from '@/generated/prisma/client';

export class CreateMergeQueueViewLinkDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 365,
    description: 'How many days the link works; at most MERGE_QUEUE_VIEW_LINK_TTL_DAYS (the default)',
  })
  @IsOptionalNonNull()
  @IsInt()
  @Min(1)
  @Max(365)
  expiresInDays?: number;
}

export class CreateMergeQueueViewLinkRequest extends RequestEnvelope(CreateMergeQueueViewLinkDto) {}

export class MergeQueueViewLinkDto {
  @ApiProperty() id: string;
  @ApiProperty() queueId: string;
  @ApiProperty({ description: "The link the queue's commit statuses carry (made and renewed by the queue itself), or one made with POST" })
  forStatuses: boolean;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Present once revoked: the link shows nothing since' }) revokedAt?: string;
  @ApiPropertyOptional({ description: 'The member or service account that made it; absent for the status link' }) createdBy?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class CreatedMergeQueueViewLinkDto extends MergeQueueViewLinkDto {
  // `x-secret`: the property carries a secret its name does not say (test/e2e/secret-responses.e2e-spec.ts).
  @ApiProperty({
    'x-secret': true,
    format: 'uri',
    description:
      'The page, with its token: shown once, never stored (it cannot be read again; make another). Anyone holding it sees the queue until it expires or is revoked. Add `?pr=N` to point at a PR',
  } as ApiPropertyOptions)
  url: string;
}

export function toMergeQueueViewLinkDto(row: MergeQueueViewLink): MergeQueueViewLinkDto {
  return {
    id: row.id,
    queueId: row.queueId,
    forStatuses: row.forStatuses,
    expiresAt: row.expiresAt.toISOString(),
    ...(row.revokedAt !== null && { revokedAt: row.revokedAt.toISOString() }),
    ...(row.createdBy !== null && { createdBy: row.createdBy }),
    createdAt: row.createdAt.toISOString(),
  };
}

export class QueuePageQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 2147483647,
    description: 'The pull request to point at: its place, state, ETA and why it is blocked or failed',
  })
  @IsOptionalNonNull()
  // Plain decimal digits only, as `limit` (Number() would take '0x10' or '1e1').
  @Transform(({ value }) => (typeof value === 'string' && /^[0-9]{1,10}$/.test(value) ? Number(value) : value))
  @IsInt({ message: 'must be a pull request number' })
  @Min(1)
  @Max(2147483647)
  pr?: number;
}
