import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsOptionalNonNull } from '@/common/http/optional';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsInt, IsNumber, IsPositive, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import type { PipelineVersion } from '@/generated/prisma/client';
import { ROW_ID } from '@/common/http/row-id';

export const MAX_STEPS = 5000;
export const STEP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** Bounds of one step: the largest sandbox a step may ask for. */
export const STEP_LIMITS = { cpu: 192, memoryGiB: 2048, diskGiB: 16384, parallelism: 1000 } as const;
const finite = { allowNaN: false, allowInfinity: false, maxDecimalPlaces: 3 };

export class StepDto {
  @ApiProperty({ pattern: STEP_NAME.source, description: 'Unique in the version', example: 'unit-tests' })
  @IsString()
  @Matches(STEP_NAME, { message: 'must be 1 to 100 letters, digits, dots, dashes or underscores, starting with a letter or digit' })
  name: string;

  @ApiProperty({ description: "An execution environment of your organization's", pattern: ROW_ID.source })
  @IsString()
  @Matches(ROW_ID, { message: 'must be an execution environment id' })
  executionEnvironmentId: string;

  @ApiProperty({ description: 'vCPUs of one sandbox', exclusiveMinimum: true, minimum: 0, maximum: STEP_LIMITS.cpu, example: 2 })
  @IsNumber(finite)
  @IsPositive()
  @Max(STEP_LIMITS.cpu)
  cpu: number;

  @ApiProperty({ description: 'Memory of one sandbox, GiB', exclusiveMinimum: true, minimum: 0, maximum: STEP_LIMITS.memoryGiB, example: 4 })
  @IsNumber(finite)
  @IsPositive()
  @Max(STEP_LIMITS.memoryGiB)
  memoryGiB: number;

  @ApiProperty({ description: 'Disk of one sandbox, GiB', exclusiveMinimum: true, minimum: 0, maximum: STEP_LIMITS.diskGiB, example: 20 })
  @IsNumber(finite)
  @IsPositive()
  @Max(STEP_LIMITS.diskGiB)
  diskGiB: number;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_STEPS, description: 'Names of steps of this version that must finish first; no cycles' })
  @IsOptionalNonNull()
  @IsArray()
  @ArrayMaxSize(MAX_STEPS)
  @ArrayUnique()
  @IsString({ each: true })
  @Matches(STEP_NAME, { each: true, message: 'must name steps of this version' })
  dependsOn?: string[];

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: STEP_LIMITS.parallelism,
    default: 1,
    description: 'How many sandboxes of this step run at once',
  })
  @IsOptionalNonNull()
  @IsInt()
  @Min(1)
  @Max(STEP_LIMITS.parallelism)
  parallelism?: number;
}

export class CreatePipelineVersionDto {
  @ApiProperty({ type: [StepDto], minItems: 1, maxItems: MAX_STEPS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_STEPS)
  @ValidateNested({ each: true })
  @Type(() => StepDto)
  steps: StepDto[];
}

export class CreatePipelineVersionRequest extends RequestEnvelope(CreatePipelineVersionDto) {}

/** A step as stored and returned: defaults filled in. */
export class PipelineStepDto {
  @ApiProperty() name: string;
  @ApiProperty() executionEnvironmentId: string;
  @ApiProperty() cpu: number;
  @ApiProperty() memoryGiB: number;
  @ApiProperty() diskGiB: number;
  @ApiProperty({ type: [String] }) dependsOn: string[];
  @ApiProperty({ type: 'integer' }) parallelism: number;
}

export class PipelineVersionDto {
  @ApiProperty() id: string;
  @ApiProperty() pipelineId: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ type: 'integer', description: 'Counts up from 1 per pipeline, without gaps' }) version: number;
  @ApiProperty({ type: [PipelineStepDto] }) steps: PipelineStepDto[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiPropertyOptional() createdById?: string;
}

export interface StoredDefinition {
  steps: PipelineStepDto[];
}

export function toPipelineVersionDto(row: PipelineVersion): PipelineVersionDto {
  const dto: PipelineVersionDto = {
    id: row.id,
    pipelineId: row.pipelineId,
    organizationId: row.organizationId,
    version: row.version,
    steps: (row.definition as unknown as StoredDefinition).steps,
    createdAt: row.createdAt.toISOString(),
  };
  if (row.createdById !== null) dto.createdById = row.createdById;
  return dto;
}
