import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { loadConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { PrismaService } from '@/common/prisma/prisma.service';
import { createTestApp } from '../support/app';
import { TestDnsServer } from '../support/dns-server';
import { createTenant, type TestTenant } from '../support/factories';

interface Domain {
  id: string;
  apex: string;
  status: string;
  verificationRecord: { type: string; name: string; value: string };
}

const PENDING_TTL_MS = 3_600_000;

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
    dns = await TestDnsServer.start();
    const base = loadConfig();
    const config = { ...base, domains: { ...base.domains, dnsServers: [dns.address], dnsTimeoutMs: 200, pendingTtlMs: PENDING_TTL_MS } };
    app = await createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
    prisma = app.get(PrismaService, { strict: false });
    [squatter, owner] = await Promise.all([createTenant(app, 'squatter'), createTenant(app, 'apex-owner')]);
  });

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
});
