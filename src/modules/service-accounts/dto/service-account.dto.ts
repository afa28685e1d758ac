import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length, MaxLength } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { RequestEnvelope } from '@/common/http/envelope';
import type { ServiceAccount } from '@/generated/prisma/client';
import { Role } from '@/generated/prisma/enums';

const ROLES = Object.values(Role);

export class CreateServiceAccountDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'ci-deployer' }) @IsString() @Length(1, 200) name: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptionalNonNull() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({ enum: ROLES, default: 'MEMBER' }) @IsOptionalNonNull() @IsIn(ROLES) role?: Role;
}

export class UpdateServiceAccountDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) @IsOptionalNonNull() @IsString() @Length(1, 200) name?: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptionalNonNull() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({ enum: ROLES, description: 'At most your own role; takes effect on the next request of its keys' })
  @IsOptionalNonNull()
  @IsIn(ROLES)
  role?: Role;
}

export class CreateServiceAccountRequest extends RequestEnvelope(CreateServiceAccountDto) {}
export class UpdateServiceAccountRequest extends RequestEnvelope(UpdateServiceAccountDto) {}

export class ServiceAccountDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: ROLES }) role: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty() createdById: string;
  @ApiProperty() createdByName: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional() description?: string;
}

export function toServiceAccountDto(row: ServiceAccount): ServiceAccountDto {
  const dto: ServiceAccountDto = {
    id: row.id,
    name: row.name,
    organizationId: row.organizationId,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    createdById: row.createdById,
    createdByName: row.createdByName,
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.description !== null) dto.description = row.description;
  return dto;
}
