import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsString, Matches, MaxLength } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CiRunnerOs, UsageImportStatus } from '@/generated/prisma/enums';
import type { UsageImport } from '@/generated/prisma/client';
import type { UsageGroupRow } from '../usage.repository';

const DAY = /^(?!0000)\d{4}-\d{2}-\d{2}$/;

/** `data` of the import endpoint's answer. */
export class UsageImportStartedDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Imports newly enqueued by this call: connected code sources with no import waiting or running' })
  started: number;
}

export class UsageImportDto {
  @ApiProperty() id: string;
  @ApiProperty() codeSourceId: string;
  @ApiProperty({
    enum: Object.values(UsageImportStatus),
    description: "QUEUED (waiting, retrying, or delayed by the provider's rate limit) -> RUNNING -> SUCCEEDED | FAILED",
  })
  status: UsageImportStatus;
  @ApiProperty({ type: 'integer', description: 'Pages of workflow runs imported (the progress)' }) pagesDone: number;
  @ApiProperty({ type: 'integer', description: 'The next page to fetch: the checkpoint a resumed import starts from' }) nextPage: number;
  @ApiProperty({ type: 'integer' }) runsImported: number;
  @ApiProperty({ type: 'integer' }) jobsImported: number;
  @ApiPropertyOptional({ format: 'date-time', description: 'Runs created before this were imported by an earlier import (incremental import)' }) since?: string;
  @ApiPropertyOptional({ format: 'date-time', description: "While delayed: when the provider's rate limit resets" }) rateLimitedUntil?: string;
  @ApiPropertyOptional({ description: 'The last error (a failure, or the reason of the last retry or delay)' }) lastError?: string;
  @ApiPropertyOptional({ format: 'date-time' }) startedAt?: string;
  @ApiPropertyOptional({ format: 'date-time' }) finishedAt?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toUsageImportDto(row: UsageImport): UsageImportDto {
  const dto: UsageImportDto = {
    id: row.id,
    codeSourceId: row.codeSourceId,
    status: row.status,
    pagesDone: row.pagesDone,
    nextPage: row.nextPage,
    runsImported: row.runsImported,
    jobsImported: row.jobsImported,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.since) dto.since = row.since.toISOString();
  if (row.rateLimitedUntil) dto.rateLimitedUntil = row.rateLimitedUntil.toISOString();
  if (row.lastError) dto.lastError = row.lastError;
  if (row.startedAt) dto.startedAt = row.startedAt.toISOString();
  if (row.finishedAt) dto.finishedAt = row.finishedAt.toISOString();
  return dto;
}

export class RunnerUsageDto {
  @ApiProperty({ enum: Object.values(CiRunnerOs) }) runnerOs: CiRunnerOs;
  @ApiProperty({ type: 'integer' }) jobs: number;
  @ApiProperty({ type: 'integer', description: 'Each job rounded up to the whole minute; self-hosted runners are not billed' }) billableMinutes: number;
}

export class UsageDayDto {
  @ApiProperty() codeSourceId: string;
  @ApiProperty() workflowName: string;
  @ApiProperty({ format: 'date', example: '2026-11-24', description: "UTC day of the runs' creation" }) day: string;
  @ApiProperty({ type: 'integer' }) runs: number;
  @ApiProperty({ type: 'integer', description: 'Jobs of every attempt of those runs' }) jobs: number;
  @ApiProperty({ type: 'integer' }) billableMinutes: number;
  @ApiProperty({ type: [RunnerUsageDto], description: 'Per runner OS' }) byRunnerOs: RunnerUsageDto[];
}

export function toUsageDayDto(row: UsageGroupRow): UsageDayDto {
  const byRunnerOs = row.byRunnerOs.map((r) => ({ runnerOs: r.runnerOs as CiRunnerOs, jobs: r.jobs, billableMinutes: r.billableMinutes }));
  return {
    codeSourceId: row.codeSourceId,
    workflowName: row.workflowName,
    day: row.day,
    runs: row.runs,
    jobs: byRunnerOs.reduce((n, r) => n + r.jobs, 0),
    billableMinutes: byRunnerOs.reduce((n, r) => n + r.billableMinutes, 0),
    byRunnerOs,
  };
}

export class UsageQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ maxLength: 64, description: 'Only this code source' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(64)
  @Matches(/^[0-9A-Za-z_-]+$/, { message: 'is not a code source id' })
  codeSourceId?: string;

  @ApiPropertyOptional({ format: 'date', example: '2026-11-01', description: 'First UTC day (inclusive)' })
  @IsOptionalNonNull()
  @IsString()
  @Matches(DAY, { message: 'must be a date YYYY-MM-DD' })
  @IsISO8601({ strict: true }, { message: 'must be a date YYYY-MM-DD' })
  from?: string;

  @ApiPropertyOptional({ format: 'date', example: '2026-11-30', description: 'Last UTC day (inclusive)' })
  @IsOptionalNonNull()
  @IsString()
  @Matches(DAY, { message: 'must be a date YYYY-MM-DD' })
  @IsISO8601({ strict: true }, { message: 'must be a date YYYY-MM-DD' })
  to?: string;
}
