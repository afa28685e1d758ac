import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsISO8601, IsString, Length, Matches, MaxLength } from 'class-validator';
import { PERMISSIONS } from '@/common/auth/permissions';
import { IsOptionalNonNull } from '@/common/http/optional';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { RequestEnvelope } from '@/common/http/envelope';
import type { ApiKey } from '@/generated/prisma/client';
import { ApiKeyOwnerType } from '@/generated/prisma/enums';

export class CreateApiKeyDto {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'ci' }) @IsString() @Length(1, 200) name: string;
  @ApiProperty({ description: 'A member or service account of your organization' }) @IsString() @Length(1, 64) ownerId: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @IsOptionalNonNull() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({
    format: 'date-time',
    description:
      'Must be in the future, and no later than the expiry of the key making the request (which is the default); absent with a non-expiring key means the new key does not expire',
  })
  @IsOptionalNonNull()
  @IsISO8601({ strict: true }, { message: 'must be an ISO 8601 date-time' })
  expiresAt?: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...PERMISSIONS] },
    minItems: 1,
    uniqueItems: true,
    description:
      "Limits the key to these permissions: it may call only the routes that require one of them (never a superadmin-only route). Each must be held by the owner's role; a key making the request that is itself scoped can only create keys within its own scopes (which are then the default). Absent: the key may do everything its owner may. Kept when the key is rotated. For CI reporting merge-queue checks: a service-account key scoped to `mergeQueues:reportChecks`.",
    example: ['mergeQueues:reportChecks'],
  })
  @IsOptionalNonNull()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PERMISSIONS.length)
  @ArrayUnique()
  @IsIn(PERMISSIONS, { each: true })
  scopes?: string[];
}

export class CreateApiKeyRequest extends RequestEnvelope(CreateApiKeyDto) {}

export class ApiKeyQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({
    description: 'Only the keys of this member or service account (without `apiKeys:manageOthers`, only your own id is allowed)',
    maxLength: 64,
  })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, 64)
  @Matches(/^[0-9A-Za-z_-]+$/, { message: 'must be an id' })
  ownerId?: string;
}

export class ApiKeyDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() ownerId: string;
  @ApiProperty({ enum: Object.values(ApiKeyOwnerType) }) ownerType: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty() createdById: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiProperty({ description: 'Last characters of the token, to tell keys apart' }) keySuffix: string;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional({ format: 'date-time' }) expiresAt?: string;
  @ApiPropertyOptional({ format: 'date-time' }) lastUsedAt?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Set once the key is revoked' }) revokedAt?: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', enum: [...PERMISSIONS] },
    description: 'The only permissions the key may use; absent when the key may do everything its owner may',
  })
  scopes?: string[];
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ description: 'The secret token. Returned only in this response; store it now.' }) token: string;
}

export function toApiKeyDto(row: ApiKey): ApiKeyDto {
  const dto: ApiKeyDto = {
    id: row.id,
    name: row.name,
    organizationId: row.organizationId,
    ownerId: row.ownerId,
    ownerType: row.ownerType,
    createdAt: row.createdAt.toISOString(),
    createdById: row.createdById,
    updatedAt: row.updatedAt.toISOString(),
    keySuffix: row.keySuffix,
  };
  if (row.description !== null) dto.description = row.description;
  if (row.expiresAt) dto.expiresAt = row.expiresAt.toISOString();
  if (row.lastUsedAt) dto.lastUsedAt = row.lastUsedAt.toISOString();
  if (row.revokedAt) dto.revokedAt = row.revokedAt.toISOString();
  if (row.scopes.length > 0) dto.scopes = [...row.scopes];
  return dto;
}
