import { ApiProperty, ApiPropertyOptional, OmitType, PartialType } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { GIVEN_ID_PATTERN } from '@/common/http/given-id';
import { ROW_ID } from '@/common/http/row-id';
import { RequestEnvelope } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import type { Pipeline } from '@/generated/prisma/client';
import { PipelineRunStatus } from '@/generated/prisma/enums';

export const RUN_STATUSES = Object.values(PipelineRunStatus);

export class CreatePipelineDto {
  @ApiProperty({ description: 'The project the pipeline belongs to', pattern: ROW_ID.source })
  @IsString()
  @Matches(ROW_ID, { message: 'must be a project id' })
  projectId: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Deploy checkout' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({
    description: 'Slug unique in the project; derived from name when absent',
    pattern: GIVEN_ID_PATTERN.source,
    example: 'deploy-checkout',
  })
  @IsOptionalNonNull()
  @IsString()
  @Matches(GIVEN_ID_PATTERN, { message: 'must be a lower-case slug (a-z, 0-9, -), 1 to 63 characters' })
  givenId?: string;

  @ApiPropertyOptional({ type: String, maxLength: 2000, nullable: true, description: '`null` means no description; on update it clears the description' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;
}

/** A pipeline stays in its project: projectId cannot change. */
// skipNullProperties: false keeps `null` out of the fields that cannot hold it (name, givenId).
export class UpdatePipelineDto extends PartialType(OmitType(CreatePipelineDto, ['projectId'] as const), { skipNullProperties: false }) {}

export class CreatePipelineRequest extends RequestEnvelope(CreatePipelineDto) {}
export class UpdatePipelineRequest extends RequestEnvelope(UpdatePipelineDto) {}

export class PipelinesQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ description: "Only this project's pipelines", pattern: ROW_ID.source })
  @IsOptional()
  @IsString()
  @Matches(ROW_ID, { message: 'must be a project id' })
  projectId?: string;
}

export class PipelineDto {
  @ApiProperty() id: string;
  @ApiProperty() givenId: string;
  @ApiProperty() name: string;
  @ApiProperty() projectId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ description: 'The newest run of the pipeline' }) latestRunId?: string;
  @ApiPropertyOptional({
    enum: RUN_STATUSES,
    enumName: 'PipelineRunStatus',
    description: 'Status of the newest run: QUEUED -> RUNNING -> SUCCEEDED | FAILED | CANCELED, or QUEUED -> CANCELED',
  })
  latestRunStatus?: string;
  @ApiPropertyOptional() organizationId?: string;
}

export function toPipelineDto(row: Pipeline): PipelineDto {
  const dto: PipelineDto = {
    id: row.id,
    givenId: row.givenId,
    name: row.name,
    projectId: row.projectId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.description !== null) dto.description = row.description;
  if (row.latestRunId !== null) dto.latestRunId = row.latestRunId;
  if (row.latestRunStatus !== null) dto.latestRunStatus = row.latestRunStatus;
  dto.organizationId = row.organizationId;
  return dto;
}
