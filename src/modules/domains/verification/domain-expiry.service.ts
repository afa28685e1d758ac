import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { MetricsService } from '@/common/metrics/metrics.service';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';

/** Expired registrations deleted per transaction. */
export const EXPIRY_BATCH_SIZE = 500;
const ACTOR = { system: 'domain expiry' };

export interface ExpirySweepSummary {
  deleted: number;
  batches: number;
}

/**
 * Expiry of PENDING_VERIFICATION registrations older than DOMAIN_PENDING_TTL_MS. The API expires
 * one when it is touched (verified, or its apex registered again); the worker's periodic sweep
 * deletes the rest in batches, each batch in one transaction with its `domain.expired` audit
 * entries. A row is deleted only while it is still PENDING and still past the TTL, and rows another
 * sweep holds are skipped, so sweeps in several workers, and a verification racing with one, are safe.
 */
@Injectable()
export class DomainExpiryService {
  private readonly logger = new Logger(DomainExpiryService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly audit: AuditService,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The moment before which a PENDING registration has expired. */
  cutoff(now: Date): Date {
    return new Date(now.getTime() - this.config.domains.pendingTtlMs);
  }

  /** Deletes one expired PENDING registration the API touched (in the caller's transaction); false when it was already gone. */
  async expireOne(tx: Prisma.TransactionClient, domain: { id: string; organizationId: string; apex: string }): Promise<boolean> {
    const { count } = await tx.managedDomain.deleteMany({ where: { id: domain.id, organizationId: domain.organizationId, status: 'PENDING_VERIFICATION' } });
    if (!count) return false;
    await this.audit.record(tx, ACTOR, {
      organizationId: domain.organizationId,
      action: AuditAction.DomainExpired,
      targetType: 'domain',
      targetId: domain.id,
      metadata: { apex: domain.apex },
    });
    this.metrics.domainClaimsExpired.inc({ by: 'touch' });
    return true;
  }

  /** The worker's sweep: every PENDING registration created before `now - DOMAIN_PENDING_TTL_MS`, in batches. */
  async sweep(now: Date): Promise<ExpirySweepSummary> {
    const cutoff = this.cutoff(now);
    const summary: ExpirySweepSummary = { deleted: 0, batches: 0 };
    for (;;) {
      const deleted = await this.prisma.$transaction(async (tx) => {
        const rows = await tx.$queryRaw<{ id: string; organizationId: string; apex: string }[]>`
          DELETE FROM "ManagedDomain" WHERE "id" IN (
            SELECT "id" FROM "ManagedDomain"
            WHERE "status" = 'PENDING_VERIFICATION' AND "createdAt" < ${cutoff}
            ORDER BY "createdAt", "id" LIMIT ${EXPIRY_BATCH_SIZE}
            FOR UPDATE SKIP LOCKED
          ) AND "status" = 'PENDING_VERIFICATION'
          RETURNING "id", "organizationId", "apex"`;
        for (const row of rows)
          await this.audit.record(tx, ACTOR, {
            organizationId: row.organizationId,
            action: AuditAction.DomainExpired,
            targetType: 'domain',
            targetId: row.id,
            metadata: { apex: row.apex, by: 'sweep' },
          });
        return rows.length;
      });
      if (deleted) {
        summary.deleted += deleted;
        summary.batches++;
        this.metrics.domainClaimsExpired.inc({ by: 'sweep' }, deleted);
      }
      if (deleted < EXPIRY_BATCH_SIZE) break;
    }
    if (summary.deleted) this.logger.log({ ...summary, cutoff: cutoff.toISOString() }, 'expired PENDING domain registrations deleted');
    return summary;
  }
}
