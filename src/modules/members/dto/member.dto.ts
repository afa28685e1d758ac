import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsIn, IsString, Length, MaxLength } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { RequestEnvelope } from '@/common/http/envelope';
import { Role } from '@/generated/prisma/enums';
import type { Member } from '@/generated/prisma/client';

const ROLES = Object.values(Role);

export class CreateMemberDto {
  @ApiProperty({ format: 'email', maxLength: 254, example: 'ada@example.com', description: 'Unique in the organization (compared case-insensitively)' })
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'must be an email address' })
  email: string;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Ada Lovelace' }) @IsString() @Length(1, 200) name: string;

  @ApiProperty({ enum: ROLES, description: 'At most your own role' }) @IsIn(ROLES) role: Role;
}

export class UpdateMemberDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) @IsOptionalNonNull() @IsString() @Length(1, 200) name?: string;
  @ApiPropertyOptional({ enum: ROLES, description: 'At most your own role; the last OWNER cannot be demoted' }) @IsOptionalNonNull() @IsIn(ROLES) role?: Role;
}

export class CreateMemberRequest extends RequestEnvelope(CreateMemberDto) {}
export class UpdateMemberRequest extends RequestEnvelope(UpdateMemberDto) {}

export class MemberDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional({ format: 'email' }) email?: string;
  @ApiProperty({ enum: ROLES }) role: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toMemberDto(row: Member): MemberDto {
  const dto: MemberDto = {
    id: row.id,
    organizationId: row.organizationId,
    name: row.name,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.email !== null) dto.email = row.email;
  return dto;
}
