import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsString, Length, MaxLength, ValidateNested } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { RequestEnvelope } from '@/common/http/envelope';
import type { Report } from '@/generated/prisma/client';
import { ApiKeyOwnerType } from '@/generated/prisma/enums';

export const REPORT_METADATA_MAX_LENGTH = 500;

/** Client and platform information that helps diagnose a report. */
export class ReportMetadataDto {
  @ApiPropertyOptional({ maxLength: REPORT_METADATA_MAX_LENGTH, example: 'dpa-cli' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(REPORT_METADATA_MAX_LENGTH)
  agent?: string;
  @ApiPropertyOptional({ maxLength: REPORT_METADATA_MAX_LENGTH, example: 'arm64' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(REPORT_METADATA_MAX_LENGTH)
  arch?: string;
  @ApiPropertyOptional({ maxLength: REPORT_METADATA_MAX_LENGTH, example: '1.4.2' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(REPORT_METADATA_MAX_LENGTH)
  cliVersion?: string;
  @ApiPropertyOptional({ maxLength: REPORT_METADATA_MAX_LENGTH, example: 'dpa queue show' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(REPORT_METADATA_MAX_LENGTH)
  command?: string;
  @ApiPropertyOptional({ maxLength: REPORT_METADATA_MAX_LENGTH, example: 'darwin 24.1' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(REPORT_METADATA_MAX_LENGTH)
  os?: string;
}

export class CreateReportDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'queue show crashes on an empty queue' }) @IsString() @Length(1, 200) title: string;
  @ApiProperty({ minLength: 1, maxLength: 20_000 }) @IsString() @Length(1, 20_000) message: string;
  @ApiPropertyOptional({ type: ReportMetadataDto, description: 'Any other member is refused' })
  @IsOptionalNonNull()
  @IsObject()
  @ValidateNested()
  @Type(() => ReportMetadataDto)
  metadata?: ReportMetadataDto;
}

export class CreateReportRequest extends RequestEnvelope(CreateReportDto) {}

export class ReportDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ description: 'The member or service account that sent it' }) reporterId: string;
  @ApiProperty({ enum: Object.values(ApiKeyOwnerType) }) reporterType: string;
  @ApiProperty() title: string;
  @ApiProperty() message: string;
  @ApiProperty({ type: ReportMetadataDto }) metadata: ReportMetadataDto;
  @ApiPropertyOptional({ description: 'The request that sent it, to find it in the logs' }) requestId?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export function toReportDto(row: Report): ReportDto {
  const dto: ReportDto = {
    id: row.id,
    organizationId: row.organizationId,
    reporterId: row.reporterId,
    reporterType: row.reporterType,
    title: row.title,
    message: row.message,
    metadata: (row.metadata ?? {}) as ReportMetadataDto,
    createdAt: row.createdAt.toISOString(),
  };
  if (row.requestId) dto.requestId = row.requestId;
  return dto;
}
