import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { PrismaService } from '@/common/prisma/prisma.service';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { DnsUnavailableError } from '../dns/dns-resolver';
import { DomainVerifier } from '../dns/domain-verifier';

/** ACTIVE domains read per query, and lookups in flight at once. */
const BATCH_SIZE = 100;
const CONCURRENT_LOOKUPS = 10;
const ACTOR = { system: 'domain re-verification' };

export type RecheckOutcome = 'seen' | 'missing' | 'lapsed' | 'unavailable' | 'changed';
export type ReverificationSummary = Record<RecheckOutcome, number>;

interface ActiveDomain {
  id: string;
  organizationId: string;
  apex: string;
  verificationToken: string;
  recordMissingSince: Date | null;
}

/**
 * Periodic re-verification of ACTIVE domains (the worker's job). A record seen again clears the
 * miss; a record missing starts (or continues) the grace period, and a domain whose record has been
 * missing for longer than the grace period becomes LAPSED: it stops counting as live. A resolver
 * that cannot answer is no evidence either way, so it changes nothing. Every write is conditional
 * on the domain still being ACTIVE, so a deletion or a verification racing with the job wins.
 */
@Injectable()
export class DomainReverificationService {
  private readonly logger = new Logger(DomainReverificationService.name);

  constructor(
    private readonly prisma: PrismaService,
    private readonly verifier: DomainVerifier,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async reverifyActive(now: Date): Promise<ReverificationSummary> {
    const summary: ReverificationSummary = { seen: 0, missing: 0, lapsed: 0, unavailable: 0, changed: 0 };
    let after: string | undefined;
    for (;;) {
      const batch: ActiveDomain[] = await this.prisma.managedDomain.findMany({
        where: { status: 'ACTIVE', ...(after ? { id: { gt: after } } : {}) },
        orderBy: { id: 'asc' },
        take: BATCH_SIZE,
        select: { id: true, organizationId: true, apex: true, verificationToken: true, recordMissingSince: true },
      });
      for (let i = 0; i < batch.length; i += CONCURRENT_LOOKUPS) {
        const outcomes = await Promise.all(batch.slice(i, i + CONCURRENT_LOOKUPS).map((domain) => this.recheck(domain, now)));
        for (const outcome of outcomes) summary[outcome]++;
      }
      if (batch.length < BATCH_SIZE) return summary;
      after = batch[batch.length - 1].id;
    }
  }

  private async recheck(domain: ActiveDomain, now: Date): Promise<RecheckOutcome> {
    let found: boolean;
    try {
      found = (await this.verifier.check(domain)).found;
    } catch (error) {
      if (!(error instanceof DnsUnavailableError)) throw error;
      this.logger.warn({ apex: domain.apex, reason: error.reason }, 'verification record lookup failed; domain left as it is');
      return 'unavailable';
    }
    const stillActive = { id: domain.id, status: 'ACTIVE' as const };
    if (found) {
      const { count } = await this.prisma.managedDomain.updateMany({
        where: stillActive,
        data: { verifiedAt: now, lastCheckedAt: now, recordMissingSince: null },
      });
      return count ? 'seen' : 'changed';
    }
    const missingSince = domain.recordMissingSince ?? now;
    if (now.getTime() - missingSince.getTime() < this.config.domains.verificationGraceMs) {
      const { count } = await this.prisma.managedDomain.updateMany({ where: stillActive, data: { lastCheckedAt: now, recordMissingSince: missingSince } });
      return count ? 'missing' : 'changed';
    }
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.managedDomain.updateMany({
        where: stillActive,
        data: { status: 'LAPSED', lastCheckedAt: now, recordMissingSince: missingSince },
      });
      if (!count) return 'changed';
      await this.audit.record(tx, ACTOR, {
        organizationId: domain.organizationId,
        action: AuditAction.DomainLapsed,
        targetType: 'domain',
        targetId: domain.id,
        metadata: { apex: domain.apex, recordMissingSince: missingSince.toISOString() },
      });
      return 'lapsed';
    });
  }
}
