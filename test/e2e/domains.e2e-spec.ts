import { randomUUID } from 'node:crypto';
import { getQueueToken } from '@nestjs/bullmq';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { INestApplicationContext } from '@nestjs/common';
import type { Queue } from 'bullmq';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { DomainsJob, QueueName } from '@/common/queues/queue-names';
import { DomainReverificationService } from '@/modules/domains/verification/domain-reverification.service';
import { createTestApp, createTestWorker } from '../support/app';
import { eventually } from '../support/eventually';
import { TestDnsServer } from '../support/dns-server';
import { createMember, createTenant, type TestTenant } from '../support/factories';

interface Domain {
  id: string;
  organizationId: string;
  apex: string;
  status: string;
  verificationRecord: { type: string; name: string; value: string };
  verifiedAt?: string;
  recordMissingSince?: string;
}

const HOUR = 3_600_000;

describe('Managed wildcard domains', () => {
  let app: NestExpressApplication;
  let dns: TestDnsServer;
  let owner: TestTenant;
  let grantee: TestTenant;
  let stranger: TestTenant;
  /** Unique per run: apexes are unique across organizations, and the test database outlives a run. */
  const run = `t${randomUUID().slice(0, 8)}`;
  const http = () => request(app.getHttpServer());

  const register = async (tenant: TestTenant, apex: string, status = 201) =>
    (await http().post('/domains').set(tenant.auth).send({ data: { apex } }).expect(status)).body;
  const publish = (domain: Domain, values = [domain.verificationRecord.value]) => dns.records.set(domain.verificationRecord.name, values);
  const verify = (tenant: TestTenant, domain: Domain) => http().post(`/domains/${domain.id}/verify`).set(tenant.auth).send();
  const status = async (tenant: TestTenant, apex: string) => (await http().get('/domains/apex-status').query({ apex }).set(tenant.auth).expect(200)).body.data;
  async function activate(tenant: TestTenant, apex: string): Promise<Domain> {
    const domain = (await register(tenant, apex)).data as Domain;
    publish(domain);
    const verified = await verify(tenant, domain).expect(200);
    expect(verified.body.data.status).toBe('ACTIVE');
    return verified.body.data;
  }

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    process.env.DNS_SERVERS = dns.address;
    process.env.DNS_TIMEOUT_MS = '200';
    app = await createTestApp();
    [owner, grantee, stranger] = await Promise.all([
      createTenant(app, 'domain-owner'),
      createTenant(app, 'domain-grantee'),
      createTenant(app, 'domain-stranger'),
    ]);
  });

  afterAll(async () => {
    await app?.close();
    await dns?.close();
  });

  describe('registration', () => {
    it('registers an apex as PENDING_VERIFICATION with a random TXT record to publish', async () => {
      const apex = `preview.${run}.acme.dev`;
      const created = (await register(owner, apex)).data as Domain;
      expect(created).toMatchObject({
        apex,
        status: 'PENDING_VERIFICATION',
        organizationId: owner.organizationId,
        verificationRecord: { type: 'TXT', name: `_dpa-challenge.${apex}` },
      });
      expect(created.verificationRecord.value).toMatch(/^dpa-verification=[A-Za-z0-9_-]{32}$/);
      const other = (await register(owner, `other.${run}.acme.dev`)).data as Domain;
      expect(other.verificationRecord.value).not.toBe(created.verificationRecord.value);

      const fetched = await http().get(`/domains/${created.id}`).set(owner.auth).expect(200);
      expect(fetched.body.data).toEqual(created);
      const list = await http().get('/domains').set(owner.auth).expect(200);
      expect(list.body.data.map((d: Domain) => d.apex)).toEqual(expect.arrayContaining([apex, `other.${run}.acme.dev`]));
      expect((await http().get('/domains').set(stranger.auth).expect(200)).body.data.map((d: Domain) => d.id)).not.toContain(created.id);
    });

    it.each([
      ['IDNA', `Bücher.${run}.Example`, `xn--bcher-kva.${run}.example`],
      ['mixed case', `MiXeD.${run}.Example.COM`, `mixed.${run}.example.com`],
      ['a trailing dot', `dot.${run}.example.org.`, `dot.${run}.example.org`],
      ['full-width digits', `ｆｕｌｌ１.${run}.example`, `full1.${run}.example`],
    ])('normalises %s', async (_label, input, normalised) => {
      const created = (await register(owner, input)).data as Domain;
      expect(created.apex).toBe(normalised);
      expect(created.verificationRecord.name).toBe(`_dpa-challenge.${normalised}`);
      // The same apex spelled differently is the same apex: taken, by the caller's own organization.
      const again = await register(owner, normalised.toUpperCase(), 409);
      expect(again.code).toBe('dpa:Domain:APEX_TAKEN');
      expect(again.metadata).toEqual({ apex: normalised, domainId: created.id });
      // Another organization learns nothing of a PENDING registration: it gets a claim of its own (first to verify wins).
      const theirs = await register(stranger, `${normalised}.`, 201);
      expect(theirs.data.apex).toBe(normalised);
      expect(theirs.data.id).not.toBe(created.id);
      expect(JSON.stringify(theirs)).not.toContain(owner.organizationId);
    });

    it.each(['com', 'co.uk', 'github.io', 'COM.', 'Co.Uk.', 'dev', 's3.amazonaws.com'])('refuses the public suffix %s (400 naming data.apex)', async (apex) => {
      const body = await register(owner, apex, 400);
      expect(body.code).toBe('dpa:Request:VALIDATION_FAILED');
      expect(body.message).toContain('data.apex: is a public suffix');
    });

    it.each([
      '',
      'localhost',
      'not a host.com',
      '-bad.example.com',
      'a..example.com',
      '1.2.3.4',
      `${'x'.repeat(64)}.example.com`,
      '*.example.com',
      'exa_mple.com',
      'http://example.com',
    ])('refuses %j as an apex', async (apex) => {
      const body = await register(owner, apex, 400);
      expect(body.message).toContain('data.apex:');
    });

    it('accepts a name under a private public suffix (foo.github.io)', async () => {
      const created = (await register(owner, `${run}.github.io`)).data as Domain;
      expect(created.apex).toBe(`${run}.github.io`);
    });
  });

  describe('verification through the DNS server', () => {
    it('answers 422 without the record, 422 with a wrong value, ACTIVE with the right one', async () => {
      const domain = (await register(owner, `verify.${run}.example`)).data as Domain;
      const missing = await verify(owner, domain).expect(422);
      expect(missing.body.code).toBe('dpa:Domain:VERIFICATION_RECORD_NOT_FOUND');
      expect(missing.body.message).toContain(`No TXT record was found at _dpa-challenge.verify.${run}.example`);
      expect(missing.body.details).toEqual([
        { title: 'Expected record', render: 'list', items: [`TXT _dpa-challenge.verify.${run}.example "${domain.verificationRecord.value}"`] },
        { title: `TXT records seen at _dpa-challenge.verify.${run}.example`, render: 'list', items: ['(none)'] },
      ]);

      publish(domain, ['dpa-verification=wrong', 'v=spf1 -all']);
      const wrong = await verify(owner, domain).expect(422);
      expect(wrong.body.details[1].items).toEqual(['"dpa-verification=wrong"', '"v=spf1 -all"']);
      expect(wrong.body.metadata).toMatchObject({
        recordName: domain.verificationRecord.name,
        expected: domain.verificationRecord.value,
        seen: ['dpa-verification=wrong', 'v=spf1 -all'],
      });
      expect((await http().get(`/domains/${domain.id}`).set(owner.auth).expect(200)).body.data.status).toBe('PENDING_VERIFICATION');

      publish(domain, ['v=spf1 -all', domain.verificationRecord.value]);
      const verified = await verify(owner, domain).expect(200);
      expect(verified.body.data).toMatchObject({ status: 'ACTIVE', apex: `verify.${run}.example` });
      expect(verified.body.data.verifiedAt).toEqual(expect.any(String));
      const audit = await http().get('/audit-events').query({ action: 'domain.verified', targetId: domain.id }).set(owner.auth).expect(200);
      expect(audit.body.data).toHaveLength(1);
    });

    it('concurrent verifications of one domain record one activation', async () => {
      const domain = (await register(owner, `at-once.${run}.example`)).data as Domain;
      publish(domain);
      const results = await Promise.all(Array.from({ length: 6 }, () => verify(owner, domain)));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(200));
      const audit = await http().get('/audit-events').query({ action: 'domain.verified', targetId: domain.id }).set(owner.auth).expect(200);
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0].metadata).toMatchObject({ from: 'PENDING_VERIFICATION' });
    });

    it('answers 503 with Retry-After when the resolver times out or fails, and changes nothing', async () => {
      const domain = (await register(owner, `slow.${run}.example`)).data as Domain;
      dns.records.set(domain.verificationRecord.name, 'timeout');
      const timedOut = await verify(owner, domain).expect(503);
      expect(timedOut.body.code).toBe('dpa:Server:SERVICE_UNAVAILABLE');
      expect(timedOut.headers['retry-after']).toBe('30');
      expect(timedOut.body.message).toContain('ETIMEOUT');
      dns.records.set(domain.verificationRecord.name, 'servfail');
      await verify(owner, domain).expect(503);
      expect((await http().get(`/domains/${domain.id}`).set(owner.auth).expect(200)).body.data.status).toBe('PENDING_VERIFICATION');
    });
  });

  describe('apex status, grants and nesting', () => {
    let parent: Domain;
    const parentApex = `${run}.acme.dev`;
    /** The owner grants `parent` to an organization; the response body. */
    const grantTo = async (organizationId: string, expected: number) =>
      (await http().post(`/domains/${parent.id}/grants`).set(owner.auth).send({ data: { organizationId } }).expect(expected)).body;

    beforeAll(async () => {
      parent = await activate(owner, parentApex);
      for (const hostname of [`b.${parentApex}`, `a-1.${parentApex}`, `a.${parentApex}`]) {
        await http()
          .post(`/domains/${parent.id}/dependents`)
          .set(owner.auth)
          .send({ data: { hostname, kind: 'PREVIEW_HOSTNAME', resourceId: `pipeline-${hostname}` } })
          .expect(201);
      }
    });

    it('tells the owner everything, sorted', async () => {
      expect(await status(owner, parentApex)).toEqual({
        apex: parentApex,
        exists: true,
        authorized: true,
        owner: owner.organizationId,
        dependentCount: 3,
        dependents: [`a-1.${parentApex}`, `a.${parentApex}`, `b.${parentApex}`],
      });
      // Normalised like registration, and as read by a VIEWER of the owner.
      const viewer = await createMember(app, owner, 'VIEWER');
      expect((await status(viewer, `${parentApex.toUpperCase()}.`)).apex).toBe(parentApex);
    });

    it('tells a stranger that it is live and whose, but not what depends on it, and refuses it names under it', async () => {
      expect(await status(stranger, parentApex)).toEqual({
        apex: parentApex,
        exists: true,
        authorized: false,
        owner: owner.organizationId,
        dependentCount: 3,
        dependents: [],
      });
      expect(await status(stranger, `x.${parentApex}`)).toEqual({
        apex: `x.${parentApex}`,
        exists: false,
        authorized: false,
        owner: '',
        dependentCount: 0,
        dependents: [],
      });
      const refused = await register(stranger, `x.${parentApex}`, 403);
      expect(refused.code).toBe('dpa:Domain:NESTING_NOT_GRANTED');
      expect(refused.metadata).toEqual({ apex: `x.${parentApex}`, parentApex });
    });

    it('lets a grantee see the dependents and nest; revoking stops new registrations', async () => {
      const grant = await grantTo(grantee.organizationId, 201);
      expect(grant.data).toMatchObject({ domainId: parent.id, organizationId: grantee.organizationId });
      expect((await grantTo(grantee.organizationId, 409)).code).toBe('dpa:DomainGrant:ALREADY_GRANTED');
      const grants = await http().get(`/domains/${parent.id}/grants`).set(owner.auth).expect(200);
      expect(grants.body.data.map((g: { organizationId: string }) => g.organizationId)).toEqual([grantee.organizationId]);

      expect(await status(grantee, parentApex)).toEqual({
        apex: parentApex,
        exists: true,
        authorized: true,
        owner: owner.organizationId,
        dependentCount: 3,
        dependents: [`a-1.${parentApex}`, `a.${parentApex}`, `b.${parentApex}`],
      });
      expect(await status(grantee, `child.${parentApex}`)).toEqual({
        apex: `child.${parentApex}`,
        exists: false,
        authorized: true,
        owner: '',
        dependentCount: 0,
        dependents: [],
      });
      const child = await activate(grantee, `child.${parentApex}`);
      // The grantee's live child apex is its own: the parent's owner needs a grant to nest under it.
      expect(await status(owner, `child.${parentApex}`)).toMatchObject({ exists: true, owner: grantee.organizationId, authorized: false, dependents: [] });
      expect((await register(owner, `deeper.child.${parentApex}`, 403)).metadata.parentApex).toBe(`child.${parentApex}`);
      // The grantee still cannot see the owner's domain itself.
      expect((await http().get(`/domains/${parent.id}`).set(grantee.auth).expect(404)).body.code).toBe('dpa:Domain:NOT_FOUND');

      await http().delete(`/domains/${parent.id}/grants/${grantee.organizationId}`).set(owner.auth).expect(204);
      expect((await http().delete(`/domains/${parent.id}/grants/${grantee.organizationId}`).set(owner.auth).expect(404)).body.code).toBe(
        'dpa:DomainGrant:NOT_FOUND',
      );
      expect(await status(grantee, parentApex)).toMatchObject({ authorized: false, dependents: [], dependentCount: 3 });
      await register(grantee, `second.${parentApex}`, 403);
      // What it registered stays.
      expect((await http().get(`/domains/${child.id}`).set(grantee.auth).expect(200)).body.data.status).toBe('ACTIVE');
    });

    it('refuses grants to an organization that does not exist, and to the owner itself', async () => {
      const missing = await grantTo('019a0000-0000-7000-8000-00000000beef', 422);
      expect(missing.code).toBe('dpa:DomainGrant:ORGANIZATION_NOT_FOUND');
      expect((await grantTo(owner.organizationId, 422)).code).toBe('dpa:DomainGrant:OWN_ORGANIZATION');
    });

    it('describes an unregistered apex as free, and another organization’s pending one as unregistered', async () => {
      expect(await status(stranger, `free.${run}.example`)).toEqual({
        apex: `free.${run}.example`,
        exists: false,
        authorized: true,
        owner: '',
        dependentCount: 0,
        dependents: [],
      });
      const pending = (await register(owner, `pending.${run}.example`)).data as Domain;
      await http()
        .post(`/domains/${pending.id}/dependents`)
        .set(owner.auth)
        .send({ data: { hostname: `x.pending.${run}.example`, kind: 'OTHER', resourceId: 'r1' } })
        .expect(201);
      expect(await status(stranger, `pending.${run}.example`)).toEqual({
        apex: `pending.${run}.example`,
        exists: false,
        authorized: true,
        owner: '',
        dependentCount: 0,
        dependents: [],
      });
      expect(await status(owner, `pending.${run}.example`)).toEqual({
        apex: `pending.${run}.example`,
        exists: false,
        authorized: true,
        owner: owner.organizationId,
        dependentCount: 1,
        dependents: [`x.pending.${run}.example`],
      });
      // A pending apex restricts nothing under it.
      await register(stranger, `sub.pending.${run}.example`);
    });

    it('lists at most 100 dependents, sorted, with the exact count', async () => {
      const big = await activate(owner, `big.${run}.example`);
      const prisma = app.get(PrismaService, { strict: false });
      const hostnames = Array.from({ length: 105 }, (_, i) => `h${String(i).padStart(3, '0')}.big.${run}.example`);
      await prisma.domainDependent.createMany({
        data: hostnames.map((hostname) => ({ organizationId: owner.organizationId, domainId: big.id, hostname, kind: 'OTHER' as const, resourceId: 'bulk' })),
      });
      const answer = await status(owner, `big.${run}.example`);
      expect(answer.dependentCount).toBe(105);
      expect(answer.dependents).toEqual(hostnames.slice(0, 100));
    });

    it('answers 400 naming the parameter for a missing or invalid apex', async () => {
      for (const query of [{}, { apex: '' }, { apex: 'com' }, { apex: 'not a host' }, { apex: 'x'.repeat(400) }]) {
        const response = await http().get('/domains/apex-status').query(query).set(stranger.auth).expect(400);
        expect(response.body.code).toBe('dpa:Request:VALIDATION_FAILED');
        expect(response.body.details[0].items[0]).toMatch(/^apex: /);
      }
    });
  });

  describe('dependents and deletion', () => {
    it('refuses a hostname outside the apex and blocks deletion while dependents remain, listing them', async () => {
      const domain = (await register(owner, `del.${run}.example`)).data as Domain;
      for (const hostname of [`del.${run}.example`, `other.${run}.example`, `xdel.${run}.example`]) {
        const refused = await http()
          .post(`/domains/${domain.id}/dependents`)
          .set(owner.auth)
          .send({ data: { hostname, kind: 'PREVIEW_HOSTNAME', resourceId: 'p1' } })
          .expect(422);
        expect(refused.body.code).toBe('dpa:DomainDependent:NOT_UNDER_APEX');
        expect(refused.body.details[0].items[0]).toMatch(/^data\.hostname: /);
      }
      const first = await http()
        .post(`/domains/${domain.id}/dependents`)
        .set(owner.auth)
        .send({ data: { hostname: `PR-1.Del.${run}.example.`, kind: 'PREVIEW_HOSTNAME', resourceId: 'pipeline-1' } })
        .expect(201);
      expect(first.body.data.hostname).toBe(`pr-1.del.${run}.example`);
      await http()
        .post(`/domains/${domain.id}/dependents`)
        .set(owner.auth)
        .send({ data: { hostname: `pr-1.del.${run}.example`, kind: 'OTHER', resourceId: 'x' } })
        .expect(409);
      const second = await http()
        .post(`/domains/${domain.id}/dependents`)
        .set(owner.auth)
        .send({ data: { hostname: `api.child.del.${run}.example`, kind: 'CHILD_APEX', resourceId: 'child-1' } })
        .expect(201);

      const blocked = await http().delete(`/domains/${domain.id}`).set(owner.auth).expect(409);
      expect(blocked.body.code).toBe('dpa:Domain:HAS_DEPENDENTS');
      expect(blocked.body.metadata).toEqual({ dependentCount: 2 });
      expect(blocked.body.details).toEqual([
        {
          title: 'Dependents',
          render: 'list',
          items: [
            `api.child.del.${run}.example: CHILD_APEX child-1 (dependent ${second.body.data.id})`,
            `pr-1.del.${run}.example: PREVIEW_HOSTNAME pipeline-1 (dependent ${first.body.data.id})`,
          ],
        },
      ]);

      const listed = await http().get(`/domains/${domain.id}/dependents`).set(owner.auth).expect(200);
      expect(listed.body.meta.totalCount).toBe(2);
      for (const dependent of [first.body.data, second.body.data])
        await http().delete(`/domains/${domain.id}/dependents/${dependent.id}`).set(owner.auth).expect(204);
      await http().delete(`/domains/${domain.id}/dependents/${first.body.data.id}`).set(owner.auth).expect(404);
      await http().delete(`/domains/${domain.id}`).set(owner.auth).expect(204);
      await http().get(`/domains/${domain.id}`).set(owner.auth).expect(404);
      // Deleted, the apex is free again.
      await register(stranger, `del.${run}.example`);
    });
  });

  describe('periodic re-verification', () => {
    it('marks an ACTIVE domain whose record disappeared LAPSED after the grace period, and it stops counting as live', async () => {
      const domain = await activate(owner, `lapse.${run}.example`);
      const kept = await activate(owner, `kept.${run}.example`);
      const reverification = app.get(DomainReverificationService, { strict: false });
      dns.records.delete(domain.verificationRecord.name);
      const now = new Date();

      const first = await reverification.reverifyActive(now);
      expect(first.missing).toBeGreaterThanOrEqual(1);
      const missing = (await http().get(`/domains/${domain.id}`).set(owner.auth).expect(200)).body.data;
      expect(missing).toMatchObject({ status: 'ACTIVE', recordMissingSince: now.toISOString() });
      expect((await status(stranger, domain.apex)).exists).toBe(true);

      // Still inside the default 24 h grace period.
      await reverification.reverifyActive(new Date(now.getTime() + 23 * HOUR));
      expect((await http().get(`/domains/${domain.id}`).set(owner.auth).expect(200)).body.data.status).toBe('ACTIVE');

      const later = await reverification.reverifyActive(new Date(now.getTime() + 25 * HOUR));
      expect(later.lapsed).toBeGreaterThanOrEqual(1);
      expect((await http().get(`/domains/${domain.id}`).set(owner.auth).expect(200)).body.data).toMatchObject({
        status: 'LAPSED',
        recordMissingSince: now.toISOString(),
      });
      expect((await http().get(`/domains/${kept.id}`).set(owner.auth).expect(200)).body.data).toMatchObject({ status: 'ACTIVE' });
      expect((await http().get(`/domains/${kept.id}`).set(owner.auth).expect(200)).body.data.recordMissingSince).toBeUndefined();
      expect(await status(stranger, domain.apex)).toEqual({ apex: domain.apex, exists: false, authorized: true, owner: '', dependentCount: 0, dependents: [] });
      expect(await status(owner, domain.apex)).toMatchObject({ exists: false, owner: owner.organizationId });
      const audit = await http().get('/audit-events').query({ action: 'domain.lapsed', targetId: domain.id }).set(owner.auth).expect(200);
      expect(audit.body.data[0]).toMatchObject({ actor: { type: 'SYSTEM', name: 'domain re-verification' } });

      // Publishing the record again and verifying brings it back.
      publish(domain);
      expect((await verify(owner, domain).expect(200)).body.data).toMatchObject({ status: 'ACTIVE' });
    });

    it('runs as the worker’s repeatable job on a real BullMQ queue', async () => {
      const domain = await activate(owner, `worker.${run}.example`);
      dns.records.delete(domain.verificationRecord.name);
      process.env.DOMAIN_VERIFICATION_GRACE_MS = '0';
      let worker: INestApplicationContext | undefined;
      try {
        worker = await createTestWorker();
        delete process.env.DOMAIN_VERIFICATION_GRACE_MS;
        const queue = worker.get<Queue>(getQueueToken(QueueName.Domains), { strict: false });
        const scheduler = await queue.getJobScheduler(DomainsJob.ReverifyActiveDomains);
        expect(scheduler).toMatchObject({ name: DomainsJob.ReverifyActiveDomains, every: HOUR });
        const job = await queue.add(DomainsJob.ReverifyActiveDomains, {});
        await eventually(
          'the re-verification job completed',
          async () => {
            expect(await job.isFailed()).toBe(false);
            return job.isCompleted();
          },
          { timeoutMs: 20_000 },
        );
        expect((await http().get(`/domains/${domain.id}`).set(owner.auth).expect(200)).body.data.status).toBe('LAPSED');
        await queue.removeJobScheduler(DomainsJob.ReverifyActiveDomains);
      } finally {
        delete process.env.DOMAIN_VERIFICATION_GRACE_MS;
        await worker?.close();
      }
    }, 40_000);
  });
});
