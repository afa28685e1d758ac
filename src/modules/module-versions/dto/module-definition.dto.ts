import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsString, Length, MaxLength } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { RequestEnvelope } from '@/common/http/envelope';
import type { ModuleDefinition } from '@/generated/prisma/client';

export class CreateModuleDefinitionDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'terraform-aws-vpc', description: 'Unique per owner (your organization, or global)' })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ maxLength: 2000 })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(2000)
  description?: string;

  @ApiPropertyOptional({ default: false, description: 'Create a global definition (no organization; visible to every organization). Superadmins only.' })
  @IsOptionalNonNull()
  @IsBoolean()
  global?: boolean;
}

export class CreateModuleDefinitionRequest extends RequestEnvelope(CreateModuleDefinitionDto) {}

export class ModuleDefinitionDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'True for a global definition, visible to every organization and writable only by superadmins' }) global: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ description: 'Absent for a global definition' }) organizationId?: string;
}

export function toModuleDefinitionDto(row: ModuleDefinition): ModuleDefinitionDto {
  const dto: ModuleDefinitionDto = {
    id: row.id,
    name: row.name,
    global: row.organizationId === null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.description !== null) dto.description = row.description;
  if (row.organizationId !== null) dto.organizationId = row.organizationId;
  return dto;
}
