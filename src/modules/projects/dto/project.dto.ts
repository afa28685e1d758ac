import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { ErrorBodyDto } from '@/common/errors/error-body';
import { GIVEN_ID_PATTERN } from '@/common/http/given-id';
import { RequestEnvelope } from '@/common/http/envelope';
import type { Project } from '@/generated/prisma/client';
import { ProjectStatus } from '@/generated/prisma/enums';

const PROJECT_STATUSES = Object.values(ProjectStatus);

export class CreateProjectDto {
  @ApiPropertyOptional({
    description: 'Slug unique in the organization; derived from name when absent',
    pattern: GIVEN_ID_PATTERN.source,
    example: 'checkout-service',
  })
  @IsOptionalNonNull()
  @IsString()
  @Matches(GIVEN_ID_PATTERN, { message: 'must be a lower-case slug (a-z, 0-9, -), 1 to 63 characters' })
  givenId?: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Checkout service' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ type: String, maxLength: 2000, nullable: true, description: '`null` means no description; on update it clears the description' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;
}

// skipNullProperties: false keeps `null` out of the fields that cannot hold it (name, givenId, status).
export class UpdateProjectDto extends PartialType(CreateProjectDto, { skipNullProperties: false }) {
  @ApiPropertyOptional({ enum: [ProjectStatus.ACTIVE, ProjectStatus.ARCHIVED], description: 'Archive or re-activate the project' })
  @IsOptionalNonNull()
  @IsIn([ProjectStatus.ACTIVE, ProjectStatus.ARCHIVED])
  status?: 'ACTIVE' | 'ARCHIVED';
}

export class CreateProjectRequest extends RequestEnvelope(CreateProjectDto) {}
export class UpdateProjectRequest extends RequestEnvelope(UpdateProjectDto) {}

export class ProjectDto {
  @ApiProperty() id: string;
  @ApiProperty() givenId: string;
  @ApiProperty() name: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: PROJECT_STATUSES }) status: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ type: ErrorBodyDto, description: 'Why the project is in status ERROR' }) error?: ErrorBodyDto;
}

export function toProjectDto(row: Project): ProjectDto {
  const dto: ProjectDto = {
    id: row.id,
    givenId: row.givenId,
    name: row.name,
    organizationId: row.organizationId,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.description !== null) dto.description = row.description;
  if (row.error !== null && typeof row.error === 'object') dto.error = row.error as unknown as ErrorBodyDto;
  return dto;
}
