import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString, Matches } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import type { PipelineRun } from '@/generated/prisma/client';
import { PipelineRunStatus } from '@/generated/prisma/enums';
import { ROW_ID } from '@/common/http/row-id';
import { RUN_STATUSES } from './pipeline.dto';

export class CreatePipelineRunDto {
  @ApiProperty({ description: 'A version of this pipeline', pattern: ROW_ID.source })
  @IsString()
  @Matches(ROW_ID, { message: 'must be a pipeline version id' })
  pipelineVersionId: string;
}

export class UpdatePipelineRunDto {
  @ApiProperty({ enum: RUN_STATUSES, enumName: 'PipelineRunStatus', description: 'QUEUED -> RUNNING -> SUCCEEDED | FAILED | CANCELED, or QUEUED -> CANCELED' })
  @IsIn(RUN_STATUSES)
  status: PipelineRunStatus;
}

export class CreatePipelineRunRequest extends RequestEnvelope(CreatePipelineRunDto) {}
export class UpdatePipelineRunRequest extends RequestEnvelope(UpdatePipelineRunDto) {}

export class PipelineRunDto {
  @ApiProperty() id: string;
  @ApiProperty() pipelineId: string;
  @ApiProperty() pipelineVersionId: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: RUN_STATUSES, enumName: 'PipelineRunStatus' }) status: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toPipelineRunDto(row: PipelineRun): PipelineRunDto {
  return {
    id: row.id,
    pipelineId: row.pipelineId,
    pipelineVersionId: row.pipelineVersionId,
    organizationId: row.organizationId,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
