import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { currentRequestId } from '@/common/http/request-context';
import { fromModel, newestFirst, Page, paginate } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { AuditEvent, Prisma } from '@/generated/prisma/client';
import type { AuditAction } from './audit-actions';
import { AuditEventDto, AuditEventQueryDto, toAuditEventDto } from './dto/audit-event.dto';

/** The platform itself acting (the CLI, a worker), rather than a caller with a key. */
export interface SystemActor {
  system: string;
}

export interface AuditRecord {
  organizationId: string;
  action: AuditAction;
  targetType: string;
  targetId: string;
  /** Small and never secret. */
  metadata?: Record<string, unknown>;
}

const LIST = newestFirst<AuditEvent>('auditEvents');

@Injectable()
export class AuditService {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Records an action inside the caller's transaction: the record exists exactly when the action
   * committed, and a failed action leaves none.
   */
  async record(tx: Prisma.TransactionClient, actor: Principal | SystemActor, record: AuditRecord): Promise<void> {
    const who =
      'system' in actor
        ? { actorType: 'SYSTEM', actorName: actor.system }
        : { actorType: actor.actorType, actorId: actor.actorId, actorName: actor.actorName, apiKeyId: actor.apiKeyId };
    await tx.auditEvent.create({
      data: {
        ...who,
        organizationId: record.organizationId,
        action: record.action,
        targetType: record.targetType,
        targetId: record.targetId,
        requestId: currentRequestId(),
        metadata: (record.metadata ?? {}) as Prisma.InputJsonObject,
      },
    });
  }

  list(principal: Principal, query: AuditEventQueryDto): Promise<Page<AuditEventDto>> {
    const where: Prisma.AuditEventWhereInput = { organizationId: principal.organizationId };
    if (query.action) where.action = query.action;
    if (query.targetType) where.targetType = query.targetType;
    if (query.targetId) where.targetId = query.targetId;
    return paginate(fromModel(this.prisma.auditEvent, where), LIST, query, toAuditEventDto);
  }
}
