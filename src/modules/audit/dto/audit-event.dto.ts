import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import type { AuditEvent } from '@/generated/prisma/client';
import { AUDIT_ACTIONS } from '../audit-actions';

export class AuditEventQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ enum: AUDIT_ACTIONS, description: 'Only this action' })
  @IsOptional()
  @IsIn(AUDIT_ACTIONS)
  action?: string;

  @ApiPropertyOptional({ description: 'Only actions on this kind of target, e.g. `apiKey`, `member`, `serviceAccount`', maxLength: 64, pattern: '^[A-Za-z]+$' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z]{1,64}$/, { message: 'must be a target type such as apiKey' })
  targetType?: string;

  @ApiPropertyOptional({ description: 'Only actions on this target id', maxLength: 64 })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  @Matches(/^[0-9A-Za-z_-]+$/, { message: 'must be an id' })
  targetId?: string;
}

export class AuditActorDto {
  @ApiProperty({ enum: ['MEMBERSHIP', 'SERVICE_ACCOUNT', 'SYSTEM'] }) type: string;
  @ApiPropertyOptional() id?: string;
  @ApiPropertyOptional() name?: string;
  @ApiPropertyOptional({ description: 'The API key the action was taken with' }) apiKeyId?: string;
}

export class AuditEventDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ type: AuditActorDto }) actor: AuditActorDto;
  @ApiProperty({ enum: AUDIT_ACTIONS }) action: string;
  @ApiProperty() targetType: string;
  @ApiProperty() targetId: string;
  @ApiPropertyOptional() requestId?: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Small details of the action (names, old and new roles); never a secret' })
  metadata: Record<string, unknown>;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export function toAuditEventDto(row: AuditEvent): AuditEventDto {
  const actor: AuditActorDto = { type: row.actorType };
  if (row.actorId) actor.id = row.actorId;
  if (row.actorName) actor.name = row.actorName;
  if (row.apiKeyId) actor.apiKeyId = row.apiKeyId;
  const dto: AuditEventDto = {
    id: row.id,
    organizationId: row.organizationId,
    actor,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
    createdAt: row.createdAt.toISOString(),
  };
  if (row.requestId) dto.requestId = row.requestId;
  return dto;
}
