import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { loadConfig, type AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { PrismaService } from '@/common/prisma/prisma.service';
import { DomainReverificationService } from '@/modules/domains/verification/domain-reverification.service';
import { createTestApp } from '../support/app';
import { TestDnsServer } from '../support/dns-server';
import { createTenant, type TestTenant } from '../support/factories';
import { buildIfStale } from '@tools/workspace/build';
import { eventually } from '../support/eventually';
import { startWorker } from '../support/processes';

interface Domain {
  id: string;
  apex: string;
  status: string;
  verificationRecord: { type: string; name: string; value: string };
}

const PENDING_TTL_MS = 3_600_000;
/** The built worker's TTL is the default (7 days): only rows made older than that on purpose are its to sweep. */
const WORKER_TTL_MS = 7 * 86_400_000;
/** DOMAIN_LAPSED_HOLD_MS of this suite's app: a LAPSED registration holds its apex this long after its record was first missed. */
const LAPSED_HOLD_MS = 10 * 86_400_000;

/** Issue 21 finding 8: an apex cannot be squatted by registering it and never verifying it. */
describe('Managed domains: squatting', () => {
  let app: NestExpressApplication;
  let dns: TestDnsServer;
  let prisma: PrismaService;
  let squatter: TestTenant;
  let owner: TestTenant;
  const run = `sq${randomUUID().slice(0, 8)}`;
  const http = () => request(app.getHttpServer());
  const register = (tenant: TestTenant, apex: string) => http().post('/domains').set(tenant.auth).send({ data: { apex } });
  const verify = (tenant: TestTenant, domain: Domain) => http().post(`/domains/${domain.id}/verify`).set(tenant.auth).send();
  const status = async (tenant: TestTenant, apex: string) => (await http().get('/domains/apex-status').query({ apex }).set(tenant.auth).expect(200)).body.data;

  beforeAll(async () => {
    buildIfStale();
    dns = await TestDnsServer.start();
    const base = loadConfig();
    const config = {
      ...base,
      domains: { ...base.domains, dnsServers: [dns.address], dnsTimeoutMs: 200, pendingTtlMs: PENDING_TTL_MS, lapsedHoldMs: LAPSED_HOLD_MS },
    };
    app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
    prisma = app.get(PrismaService, { strict: false });
    [squatter, owner] = await Promise.all([createTenant(app, 'squatter'), createTenant(app, 'apex-owner')]);
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await dns?.close();
  });

  it('an unverified registration reveals nothing to another organization and holds nothing: the first to verify wins', async () => {
    const apex = `shop.${run}.example`;
    const squat = (await register(squatter, apex).expect(201)).body.data as Domain;
    // The real owner registers the same apex as if it were free: a claim of its own, with its own record.
    const claim = await register(owner, apex);
    expect(claim.status).toBe(201);
    const mine = claim.body.data as Domain;
    expect(mine.status).toBe('PENDING_VERIFICATION');
    expect(mine.verificationRecord.value).not.toBe(squat.verificationRecord.value);
    expect(JSON.stringify(claim.body)).not.toContain(squatter.organizationId);
    expect(JSON.stringify(claim.body)).not.toContain(squat.id);
    expect(await status(owner, apex)).toMatchObject({ exists: false, owner: owner.organizationId, authorized: true });
    // The owner can publish its record; the squatter cannot.
    dns.records.set(mine.verificationRecord.name, [mine.verificationRecord.value]);
    expect((await verify(owner, mine).expect(200)).body.data.status).toBe('ACTIVE');
    const lost = await verify(squatter, squat).expect(409);
    expect(lost.body.code).toBe('dpa:Domain:APEX_TAKEN');
    // Once live, the apex is public: a new registration by anyone else is a 409.
    expect((await register(squatter, apex).expect(409)).body.code).toBe('dpa:Domain:APEX_TAKEN');
    expect(await status(squatter, apex)).toMatchObject({ exists: true, owner: owner.organizationId, authorized: false });
  });

  it('a PENDING registration expires after DOMAIN_PENDING_TTL_MS: it can no longer be verified, and registering again starts afresh', async () => {
    const apex = `old.${run}.example`;
    const stale = (await register(squatter, apex).expect(201)).body.data as Domain;
    await prisma.managedDomain.update({ where: { id: stale.id }, data: { createdAt: new Date(Date.now() - PENDING_TTL_MS - 60_000) } });
    dns.records.set(stale.verificationRecord.name, [stale.verificationRecord.value]);
    const expired = await verify(squatter, stale).expect(422);
    expect(expired.body.code).toBe('dpa:Domain:REGISTRATION_EXPIRED');
    // Expired is gone: not listed, and the apex reads as free to its former holder too.
    const listed = (await http().get('/domains').query({ limit: 100 }).set(squatter.auth).expect(200)).body.data as Domain[];
    expect(listed.map((d) => d.id)).not.toContain(stale.id);
    const fresh = (await register(squatter, apex).expect(201)).body.data as Domain;
    expect(fresh.id).not.toBe(stale.id);
    expect(fresh.verificationRecord.value).not.toBe(stale.verificationRecord.value);
  });

  it('the worker sweeps expired PENDING registrations periodically, in batches, with audit entries and a metric; nothing else is touched', async () => {
    const old = new Date(Date.now() - WORKER_TTL_MS - 3_600_000);
    const stale = (await register(squatter, `swept.sw.${run}.example`).expect(201)).body.data as Domain;
    const fresh = (await register(squatter, `young.sw.${run}.example`).expect(201)).body.data as Domain;
    const active = (await register(owner, `live.sw.${run}.example`).expect(201)).body.data as Domain;
    dns.records.set(active.verificationRecord.name, [active.verificationRecord.value]);
    expect((await verify(owner, active).expect(200)).body.data.status).toBe('ACTIVE');
    await prisma.managedDomain.updateMany({ where: { id: { in: [stale.id, active.id] } }, data: { createdAt: old } });
    // More expired claims than one batch holds (500), twice over.
    const bulk = Array.from({ length: 1_100 }, (_, i) => ({
      organizationId: squatter.organizationId,
      apex: `bulk${i}.sw.${run}.example`,
      verificationToken: `dpa-verification=bulk${i}`,
      createdAt: old,
    }));
    await prisma.managedDomain.createMany({ data: bulk });
    const mine = { organizationId: squatter.organizationId, apex: { endsWith: `.sw.${run}.example` } };
    expect(await prisma.managedDomain.count({ where: mine })).toBe(1_102);

    const worker = await startWorker({
      QUEUE_PREFIX: `dpa-sweep-${randomUUID().slice(0, 8)}`,
      DOMAIN_PENDING_SWEEP_INTERVAL_MS: '1000',
      WORKER_HEALTH_PORT: '0',
    });
    try {
      await eventually('the expired claims swept', async () => (await prisma.managedDomain.count({ where: mine })) === 1, { timeoutMs: 60_000 });
      expect((await prisma.managedDomain.findMany({ where: mine, select: { id: true } })).map((d) => d.id)).toEqual([fresh.id]);
      expect((await http().get(`/domains/${active.id}`).set(owner.auth).expect(200)).body.data.status).toBe('ACTIVE');
      await http().get(`/domains/${stale.id}`).set(squatter.auth).expect(404);
      const audit = await http().get('/audit-events').query({ action: 'domain.expired', targetId: stale.id }).set(squatter.auth).expect(200);
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0]).toMatchObject({ actor: { type: 'SYSTEM', name: 'domain expiry' }, metadata: { apex: stale.apex, by: 'sweep' } });
      expect(
        await prisma.auditEvent.count({
          where: { organizationId: squatter.organizationId, action: 'domain.expired', metadata: { path: ['by'], equals: 'sweep' } },
        }),
      ).toBe(1_101);
      const port = Number(/"healthPort":(\d+)/.exec(worker.output)?.[1]);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const swept = Number(/^dpa_domain_claims_expired_total\{by="sweep"\} (\d+)$/m.exec(metrics)?.[1]);
      // Another suite's in-process worker may sweep some of these first; this worker swept the rest.
      expect(swept).toBeGreaterThan(0);
    } finally {
      await worker.stop();
    }
    // The log line of each sweep that deleted something (read after exit: the logger writes asynchronously).
    expect(worker.output).toMatch(/"msg":"expired PENDING domain registrations deleted"/);
  }, 120_000);

  // Last: re-verification runs over every ACTIVE domain of the database, at the times given.
  it('a LAPSED registration holds its apex for DOMAIN_LAPSED_HOLD_MS after its record was first missed, then the apex is free to its real DNS owner', async () => {
    const reverification = app.get(DomainReverificationService, { strict: false });
    const grace = app.get<AppConfig>(APP_CONFIG).domains.verificationGraceMs;
    /** Verified by `tenant`, then its record gone from DNS and re-verification run at `missedAt` and past the grace period: LAPSED. */
    const lapse = async (tenant: TestTenant, apex: string, missedAt: number): Promise<Domain> => {
      const domain = (await register(tenant, apex).expect(201)).body.data as Domain;
      dns.records.set(domain.verificationRecord.name, [domain.verificationRecord.value]);
      expect((await verify(tenant, domain).expect(200)).body.data.status).toBe('ACTIVE');
      dns.records.delete(domain.verificationRecord.name);
      await reverification.reverifyActive(new Date(missedAt));
      await reverification.reverifyActive(new Date(missedAt + grace + 1_000));
      expect((await http().get(`/domains/${domain.id}`).set(tenant.auth).expect(200)).body.data.status).toBe('LAPSED');
      return domain;
    };
    const [former, dnsOwner] = await Promise.all([createTenant(app, 'lapsed-holder'), createTenant(app, 'dns-owner')]);

    // Lapsed recently (its record first missed within the hold): the apex is still held.
    const recent = `recent.lapsed.${run}.example`;
    await lapse(former, recent, Date.now() - grace - 60_000);
    expect((await register(dnsOwner, recent).expect(409)).body.code).toBe('dpa:Domain:APEX_TAKEN');

    // Lapsed longer ago than the hold: the apex is free; the first to verify wins.
    const old = `old.lapsed.${run}.example`;
    const lapsed = await lapse(former, old, Date.now() - LAPSED_HOLD_MS - grace - 3_600_000);
    const claim = (await register(dnsOwner, old).expect(201)).body.data as Domain;
    expect(claim.status).toBe('PENDING_VERIFICATION');
    dns.records.set(claim.verificationRecord.name, [claim.verificationRecord.value]);
    expect((await verify(dnsOwner, claim).expect(200)).body.data.status).toBe('ACTIVE');
    expect(await status(former, old)).toMatchObject({ exists: true, owner: dnsOwner.organizationId, authorized: false });
    // The former holder's registration stays LAPSED and cannot take the apex back while the new owner holds it.
    dns.records.set(lapsed.verificationRecord.name, [claim.verificationRecord.value, lapsed.verificationRecord.value]);
    expect((await verify(former, lapsed).expect(409)).body.code).toBe('dpa:Domain:APEX_TAKEN');
    expect((await http().get(`/domains/${lapsed.id}`).set(former.auth).expect(200)).body.data.status).toBe('LAPSED');
  });
});
