import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors, ServerErrors } from '@/common/errors/common.errors';
import { capList, invalidFields, MAX_LISTED_PROBLEMS } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { ManagedDomain, Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { normalizeApex } from './dns/apex-name';
import { mayNestUnder } from './apex-status/apex-status.rules';
import { DnsUnavailableError } from './dns/dns-resolver';
import { DomainExpiryService } from './verification/domain-expiry.service';
import { DomainVerifier } from './dns/domain-verifier';
import { DomainErrors } from './domains.errors';
import { DomainsRepository } from './domains.repository';
import { CreateDomainDto, DomainDto, toDomainDto } from './dto/domain.dto';

const LIST = newestFirst<ManagedDomain>('domains');
/** Seconds a client should wait before verifying again after the resolver did not answer. */
const DNS_RETRY_AFTER_SECONDS = 30;

/** Registers, verifies, lists and deletes an organization's managed wildcard apexes. */
@Injectable()
export class DomainsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly repository: DomainsRepository,
    private readonly verifier: DomainVerifier,
    private readonly audit: AuditService,
    private readonly expiry: DomainExpiryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<DomainDto>> {
    return paginate(fromModel(this.prisma.managedDomain, { organizationId: principal.organizationId }), LIST, query, toDomainDto);
  }

  async get(principal: Principal, id: string): Promise<DomainDto> {
    return toDomainDto(await this.repository.find(this.prisma, principal.organizationId, id));
  }

  /**
   * Registers an apex as PENDING_VERIFICATION with a fresh random TXT value. An unverified
   * registration holds nothing and reveals nothing: other organizations may each hold a pending
   * claim on the same apex, and the first to verify wins. Refused when the caller's organization
   * already holds the apex (409 with its id), when another organization's registration was verified
   * (ACTIVE, or LAPSED for less than DOMAIN_LAPSED_HOLD_MS: 409, its wildcard was public), or when the nearest ACTIVE apex above it
   * belongs to another organization that has not granted the caller's (403). An expired PENDING
   * registration of the caller's is replaced.
   */
  async register(principal: Principal, dto: CreateDomainDto): Promise<DomainDto> {
    const apex = this.apexOf(dto.apex);
    const organizationId = principal.organizationId;
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        await this.lockApex(tx, apex);
        await this.assertMayNest(tx, apex, organizationId);
        const holders = await tx.managedDomain.findMany({ where: { apex }, select: { id: true, organizationId: true, status: true, createdAt: true } });
        const own = holders.find((h) => h.organizationId === organizationId);
        if (own && this.expired(own)) await this.expire(tx, own.id, organizationId, apex);
        else if (own) throw this.taken(apex, own.id);
        if (await this.heldByAnother(tx, apex, organizationId)) throw this.taken(apex);
        const domain = await tx.managedDomain.create({
          data: { organizationId, apex, verificationToken: `dpa-verification=${randomBytes(24).toString('base64url')}` },
        });
        await this.audit.record(tx, principal, {
          organizationId,
          action: AuditAction.DomainRegistered,
          targetType: 'domain',
          targetId: domain.id,
          metadata: { apex },
        });
        return domain;
      });
      return toDomainDto(row);
    } catch (error) {
      if (!isUniqueViolation(error, 'apex')) throw error;
      const own = await this.prisma.managedDomain.findFirst({ where: { apex, organizationId }, select: { id: true } });
      throw this.taken(apex, own?.id);
    }
  }

  /** 409: the caller is told the domain id only when the holder is its own organization. */
  private taken(apex: string, ownId?: string): AppError {
    return new AppError(DomainErrors.APEX_TAKEN, {
      message: ownId ? `${apex} is already registered by your organization.` : `${apex} is already registered.`,
      metadata: ownId ? { apex, domainId: ownId } : { apex },
      details: [invalidFields([`data.apex: ${apex} is already registered`])],
    });
  }

  /** Registrations and activations of one apex one at a time (the apex is not unique across organizations). */
  private async lockApex(tx: Prisma.TransactionClient, apex: string): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`managed-domain:${apex}`}, 0))`;
  }

  /**
   * Whether another organization's verified registration holds the apex: an ACTIVE one, or a LAPSED
   * one whose record was first missed less than DOMAIN_LAPSED_HOLD_MS ago. PENDING claims hold nothing.
   */
  private async heldByAnother(client: Prisma.TransactionClient, apex: string, organizationId: string, now = Date.now()): Promise<boolean> {
    const since = new Date(now - this.config.domains.lapsedHoldMs);
    const holding = await client.managedDomain.count({
      where: {
        apex,
        organizationId: { not: organizationId },
        OR: [
          { status: 'ACTIVE' },
          { status: 'LAPSED', recordMissingSince: { gte: since } },
          // A lapse always records when the record was first missed; a row without it counts from its last change.
          { status: 'LAPSED', recordMissingSince: null, updatedAt: { gte: since } },
        ],
      },
    });
    return holding > 0;
  }

  private expired(domain: Pick<ManagedDomain, 'status' | 'createdAt'>, now = Date.now()): boolean {
    return domain.status === 'PENDING_VERIFICATION' && now - domain.createdAt.getTime() > this.config.domains.pendingTtlMs;
  }

  /** Deletes an expired PENDING registration (it never had dependents that mattered: nothing was live); the worker's sweep may have deleted it first. */
  private async expire(tx: Prisma.TransactionClient, id: string, organizationId: string, apex: string): Promise<void> {
    await this.expiry.expireOne(tx, { id, organizationId, apex });
  }

  /**
   * Looks the TXT record up: found -> ACTIVE (the wildcard is live and managed); not found -> 422
   * naming the record expected and what was seen; a resolver that does not answer -> 503. A
   * PENDING domain under an apex that went live for another organization since it was registered
   * needs that organization's grant first (403).
   */
  async verify(principal: Principal, id: string): Promise<DomainDto> {
    const organizationId = principal.organizationId;
    const domain = await this.repository.find(this.prisma, organizationId, id);
    if (this.expired(domain)) {
      await this.prisma.$transaction((tx) => this.expire(tx, id, organizationId, domain.apex));
      throw new AppError(DomainErrors.REGISTRATION_EXPIRED, {
        message: `The registration of ${domain.apex} stayed unverified for more than ${Math.round(this.config.domains.pendingTtlMs / 60_000)} minutes and has expired; register the apex again.`,
        metadata: { id, apex: domain.apex },
      });
    }
    // First to verify wins: while another organization's verified registration holds the apex, this one cannot be verified (asked again under the lock below).
    if (domain.status !== 'ACTIVE' && (await this.heldByAnother(this.prisma, domain.apex, organizationId))) throw this.taken(domain.apex);
    // An ACTIVE domain stays live whatever went live above it later; a new activation needs the right to nest.
    if (domain.status !== 'ACTIVE') await this.assertMayNest(this.prisma, domain.apex, organizationId);
    let check;
    try {
      check = await this.verifier.check(domain);
    } catch (error) {
      if (!(error instanceof DnsUnavailableError)) throw error;
      throw new AppError(ServerErrors.SERVICE_UNAVAILABLE, {
        message: `The DNS resolver did not answer for ${error.recordName} (${error.reason}); try again shortly.`,
        headers: { 'Retry-After': String(DNS_RETRY_AFTER_SECONDS) },
        metadata: { dependency: 'dns', record: error.recordName },
      });
    }
    const expected = `TXT ${check.name} "${domain.verificationToken}"`;
    if (!check.found) {
      throw new AppError(DomainErrors.VERIFICATION_RECORD_NOT_FOUND, {
        message:
          check.seen.length === 0
            ? `No TXT record was found at ${check.name}; expected ${expected}.`
            : `The TXT records at ${check.name} do not include the expected value; expected ${expected}.`,
        details: [
          { title: 'Expected record', render: 'list', items: [expected] },
          {
            title: `TXT records seen at ${check.name}`,
            render: 'list',
            items: check.seen.length === 0 ? ['(none)'] : capList(check.seen.map((value) => `"${value}"`)),
          },
        ],
        metadata: { recordName: check.name, expected: domain.verificationToken, seen: capList(check.seen) },
      });
    }
    const now = new Date();
    const row = await this.prisma.$transaction(async (tx) => {
      // The status as of the write (under the row lock): only the verification that activates the domain records it.
      await this.lockApex(tx, domain.apex);
      const before = await this.repository.lock(tx, organizationId, id);
      // First to verify wins: another organization's verified registration holds the apex.
      if (before.status !== 'ACTIVE' && (await this.heldByAnother(tx, domain.apex, organizationId))) throw this.taken(domain.apex);
      await tx.managedDomain.updateMany({
        where: { id, organizationId },
        data: { status: 'ACTIVE', verifiedAt: now, lastCheckedAt: now, recordMissingSince: null },
      });
      if (before.status !== 'ACTIVE') {
        await this.audit.record(tx, principal, {
          organizationId,
          action: AuditAction.DomainVerified,
          targetType: 'domain',
          targetId: id,
          metadata: { apex: domain.apex, from: before.status },
        });
      }
      return this.repository.find(tx, organizationId, id);
    });
    return toDomainDto(row);
  }

  /** Deletes the domain and its grants; refused while it has dependents (409 listing them). */
  async remove(principal: Principal, id: string): Promise<void> {
    const organizationId = principal.organizationId;
    await this.prisma.$transaction(async (tx) => {
      const domain = await this.repository.lock(tx, organizationId, id);
      const dependentCount = await tx.domainDependent.count({ where: { domainId: id } });
      if (dependentCount > 0) {
        const listed = await tx.domainDependent.findMany({ where: { domainId: id }, orderBy: [{ hostname: 'asc' }, { id: 'asc' }], take: MAX_LISTED_PROBLEMS });
        const items = listed.map((d) => `${d.hostname}: ${d.kind} ${d.resourceId} (dependent ${d.id})`);
        if (dependentCount > listed.length) items.push(`… and ${dependentCount - listed.length} more`);
        throw new AppError(DomainErrors.HAS_DEPENDENTS, {
          message: `${domain.apex} has ${dependentCount} dependent${dependentCount === 1 ? '' : 's'}; remove them first.`,
          details: [{ title: 'Dependents', render: 'list', items: capList(items, MAX_LISTED_PROBLEMS + 1) }],
          metadata: { dependentCount },
        });
      }
      await tx.managedDomain.delete({ where: { id } });
      await this.audit.record(tx, principal, {
        organizationId,
        action: AuditAction.DomainDeleted,
        targetType: 'domain',
        targetId: id,
        metadata: { apex: domain.apex, status: domain.status },
      });
    });
  }

  private apexOf(input: string): string {
    const result = normalizeApex(input);
    if (!result.ok)
      throw new AppError(RequestErrors.VALIDATION_FAILED, {
        message: `Invalid request: data.apex: ${result.reason}`,
        details: [invalidFields([`data.apex: ${result.reason}`])],
        metadata: { fields: ['data.apex'] },
      });
    return result.name;
  }

  private async assertMayNest(client: Parameters<DomainsRepository['activeAncestor']>[0], apex: string, organizationId: string): Promise<void> {
    const above = await this.repository.activeAncestor(client, apex, organizationId);
    if (above && !mayNestUnder(organizationId, above)) {
      throw new AppError(DomainErrors.NESTING_NOT_GRANTED, {
        message: `${apex} is under ${above.apex}, a live apex of another organization that has not granted yours the right to nest under it.`,
        metadata: { apex, parentApex: above.apex },
      });
    }
  }
}
