import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { ApiKeysService } from '@/modules/api-keys/api-keys.service';
import { AuditService } from '@/modules/audit/audit.service';
import { createTestApp, useTwoApps } from '../support/app';
import { statusEventually } from '../support/eventually';
import { createMember, createTenant, type TestTenant } from '../support/factories';

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('Identity and access', () => {
  let app: NestExpressApplication;
  let owner: TestTenant;
  let admin: TestTenant;
  let viewer: TestTenant;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    owner = await createTenant(app, 'access');
    admin = await createMember(app, owner, 'ADMIN');
    viewer = await createMember(app, owner, 'VIEWER');
  });

  afterAll(async () => {
    await app.close();
  });

  describe('API keys cannot be used to escalate', () => {
    it('an ADMIN can neither read, rotate nor revoke an OWNER member key', async () => {
      for (const call of [
        http().get(`/api-keys/${owner.apiKeyId}`),
        http().post(`/api-keys/${owner.apiKeyId}/rotate`),
        http().delete(`/api-keys/${owner.apiKeyId}`),
      ]) {
        const response = await call.set(admin.auth).expect(403);
        expect(response.body).toMatchObject({ code: 'dpa:Auth:FORBIDDEN', metadata: { permission: 'apiKeys:manageOthers', ownerRole: 'OWNER' } });
      }
      await http().get('/projects').set(owner.auth).expect(200);
    });

    it('an ADMIN can neither issue for nor revoke the keys of an OWNER service account', async () => {
      const account = await http()
        .post('/service-accounts')
        .set(owner.auth)
        .send({ data: { name: `owner-sa-${Date.now()}`, role: 'OWNER' } })
        .expect(201);
      const key = await http()
        .post('/api-keys')
        .set(owner.auth)
        .send({ data: { name: 'sa', ownerId: account.body.data.id } })
        .expect(201);
      await http()
        .post('/api-keys')
        .set(admin.auth)
        .send({ data: { name: 'x', ownerId: account.body.data.id } })
        .expect(403);
      await http().delete(`/api-keys/${key.body.data.id}`).set(admin.auth).expect(403);
      await http().get('/projects').set(bearer(key.body.data.token)).expect(200);
    });

    it("a fellow OWNER who is no superadmin can neither issue nor rotate a superadmin's key (which would act as superadmin)", async () => {
      const platform = await createTenant(app, 'superadmin-keys', { superadmin: true });
      const coOwner = await createMember(app, platform, 'OWNER');
      const issued = await http()
        .post('/api-keys')
        .set(coOwner.auth)
        .send({ data: { name: 'borrowed', ownerId: platform.memberId } });
      expect(issued.status).toBe(403);
      expect(issued.body).toMatchObject({ code: 'dpa:Auth:FORBIDDEN', metadata: { permission: 'platform:superadmin' } });
      const rotated = await http().post(`/api-keys/${platform.apiKeyId}/rotate`).set(coOwner.auth);
      expect(rotated.status).toBe(403);
      expect(rotated.body).toMatchObject({ code: 'dpa:Auth:FORBIDDEN', metadata: { permission: 'platform:superadmin' } });
      // The superadmin's own token still works, and the co-owner still manages everyone else's keys.
      await http().get('/reports').set(platform.auth).expect(200);
      await http().get('/reports').set(coOwner.auth).expect(403);
      const viewerOfPlatform = await createMember(app, platform, 'VIEWER');
      await http()
        .post('/api-keys')
        .set(coOwner.auth)
        .send({ data: { name: 'for-viewer', ownerId: viewerOfPlatform.memberId } })
        .expect(201);
      // A superadmin may still manage another superadmin's keys.
      await http()
        .post('/api-keys')
        .set(platform.auth)
        .send({ data: { name: 'own', ownerId: platform.memberId } })
        .expect(201);
    });

    it('rotation with an expiring key cannot turn a longer-lived key into a fresh token that outlives it', async () => {
      const tenant = await createTenant(app, 'rotate-ceiling');
      const member = await createMember(app, tenant, 'MEMBER');
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const shortLived = await http()
        .post('/api-keys')
        .set(tenant.auth)
        .send({ data: { name: 'short', ownerId: tenant.memberId, expiresAt } })
        .expect(201);
      const forever = await http()
        .post('/api-keys')
        .set(tenant.auth)
        .send({ data: { name: 'forever', ownerId: member.memberId } })
        .expect(201);
      for (const id of [forever.body.data.id, tenant.apiKeyId]) {
        const refused = await http().post(`/api-keys/${id}/rotate`).set(bearer(shortLived.body.data.token));
        expect(refused.status).toBe(422);
        expect(refused.body).toMatchObject({ code: 'dpa:ApiKey:EXPIRY_AFTER_CREATOR', metadata: { maxExpiresAt: expiresAt } });
      }
      await http().get('/projects').set(bearer(forever.body.data.token)).expect(200);
      await http().get('/projects').set(tenant.auth).expect(200);
      // A key expiring no later than the one in use rotates as before, the one in use included.
      const sooner = await http()
        .post('/api-keys')
        .set(bearer(shortLived.body.data.token))
        .send({ data: { name: 'sooner', ownerId: member.memberId } })
        .expect(201);
      await http().post(`/api-keys/${sooner.body.data.id}/rotate`).set(bearer(shortLived.body.data.token)).expect(201);
      await http().post(`/api-keys/${shortLived.body.data.id}/rotate`).set(bearer(shortLived.body.data.token)).expect(201);
    });

    it('a VIEWER lists only its own keys and may not ask for anyone else', async () => {
      const mine = await http().get('/api-keys').set(viewer.auth).expect(200);
      expect(mine.body.data.map((k: { ownerId: string }) => k.ownerId)).toEqual([viewer.memberId]);
      await http().get('/api-keys').query({ ownerId: owner.memberId }).set(viewer.auth).expect(403);
      await http().get(`/api-keys/${admin.apiKeyId}`).set(viewer.auth).expect(403);
    });

    it("an ADMIN's list leaves out OWNER keys and filters by ownerId", async () => {
      const all = await http().get('/api-keys').query({ limit: 100 }).set(admin.auth).expect(200);
      const owners = new Set(all.body.data.map((k: { ownerId: string }) => k.ownerId));
      expect(owners.has(owner.memberId)).toBe(false);
      expect(owners.has(viewer.memberId)).toBe(true);
      const filtered = await http().get('/api-keys').query({ ownerId: viewer.memberId }).set(admin.auth).expect(200);
      expect(filtered.body.data.every((k: { ownerId: string }) => k.ownerId === viewer.memberId)).toBe(true);
      expect(filtered.body.meta.totalCount).toBe(filtered.body.data.length);
    });

    it('a key created by an expiring key cannot outlive it', async () => {
      const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
      const parent = await http()
        .post('/api-keys')
        .set(owner.auth)
        .send({ data: { name: 'short-lived', ownerId: owner.memberId, expiresAt } })
        .expect(201);
      const child = await http()
        .post('/api-keys')
        .set(bearer(parent.body.data.token))
        .send({ data: { name: 'child', ownerId: owner.memberId } })
        .expect(201);
      expect(child.body.data.expiresAt).toBe(expiresAt);
      const later = await http()
        .post('/api-keys')
        .set(bearer(parent.body.data.token))
        .send({ data: { name: 'forever', ownerId: owner.memberId, expiresAt: new Date(Date.now() + 86_400_000).toISOString() } })
        .expect(422);
      expect(later.body).toMatchObject({ code: 'dpa:ApiKey:EXPIRY_AFTER_CREATOR', metadata: { maxExpiresAt: expiresAt } });
      expect(later.body.details[0].items[0]).toMatch(/^data\.expiresAt: /);
    });

    it('rotation issues a new token for the same key and the old one stops at once', async () => {
      const key = await http()
        .post('/api-keys')
        .set(viewer.auth)
        .send({ data: { name: 'to-rotate', ownerId: viewer.memberId } })
        .expect(201);
      await http().get('/projects').set(bearer(key.body.data.token)).expect(200);
      const rotated = await http().post(`/api-keys/${key.body.data.id}/rotate`).set(viewer.auth).expect(201);
      expect(rotated.headers['cache-control']).toContain('no-store');
      expect(rotated.body.data.id).toBe(key.body.data.id);
      expect(rotated.body.data.token).not.toBe(key.body.data.token);
      expect(rotated.body.data.keySuffix).toBe(rotated.body.data.token.slice(-4));
      await http().get('/projects').set(bearer(key.body.data.token)).expect(401);
      await http().get('/projects').set(bearer(rotated.body.data.token)).expect(200);
      await http().delete(`/api-keys/${key.body.data.id}`).set(viewer.auth).expect(204);
      expect((await http().post(`/api-keys/${key.body.data.id}/rotate`).set(viewer.auth).expect(422)).body.code).toBe('dpa:ApiKey:NOT_ROTATABLE');
    });
  });

  describe('members and roles', () => {
    it('nobody grants a role above their own', async () => {
      expect(
        (
          await http()
            .post('/members')
            .set(admin.auth)
            .send({ data: { email: 'boss@example.com', name: 'Boss', role: 'OWNER' } })
            .expect(403)
        ).body.metadata,
      ).toMatchObject({ role: 'OWNER' });
      const member = await http()
        .post('/members')
        .set(admin.auth)
        .send({ data: { email: `m-${Date.now()}@example.com`, name: 'M', role: 'MEMBER' } })
        .expect(201);
      await http()
        .patch(`/members/${member.body.data.id}`)
        .set(admin.auth)
        .send({ data: { role: 'OWNER' } })
        .expect(403);
      await http()
        .post('/service-accounts')
        .set(admin.auth)
        .send({ data: { name: `sa-${Date.now()}`, role: 'OWNER' } })
        .expect(403);
      await http()
        .patch(`/members/${owner.memberId}`)
        .set(admin.auth)
        .send({ data: { name: 'renamed' } })
        .expect(403);
      await http().delete(`/members/${owner.memberId}`).set(admin.auth).expect(403);
    });

    it('the last OWNER can be neither demoted nor removed; with two, one can go', async () => {
      const tenant = await createTenant(app, 'last-owner');
      expect(
        (
          await http()
            .patch(`/members/${tenant.memberId}`)
            .set(tenant.auth)
            .send({ data: { role: 'ADMIN' } })
            .expect(409)
        ).body.code,
      ).toBe('dpa:Member:LAST_OWNER');
      expect((await http().delete(`/members/${tenant.memberId}`).set(tenant.auth).expect(409)).body.code).toBe('dpa:Member:LAST_OWNER');
      const second = await createMember(app, tenant, 'OWNER');
      await http()
        .patch(`/members/${tenant.memberId}`)
        .set(second.auth)
        .send({ data: { role: 'ADMIN' } })
        .expect(200);
      expect((await http().delete(`/members/${second.memberId}`).set(second.auth).expect(409)).body.code).toBe('dpa:Member:LAST_OWNER');
    });

    it('concurrent demotions of two OWNERs leave one OWNER', async () => {
      const tenant = await createTenant(app, 'owner-race');
      const second = await createMember(app, tenant, 'OWNER');
      const results = await Promise.all([
        http()
          .patch(`/members/${tenant.memberId}`)
          .set(second.auth)
          .send({ data: { role: 'ADMIN' } }),
        http()
          .patch(`/members/${second.memberId}`)
          .set(tenant.auth)
          .send({ data: { role: 'ADMIN' } }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      const owners = await app.get(PrismaService).member.count({ where: { organizationId: tenant.organizationId, role: 'OWNER' } });
      expect(owners).toBe(1);
    });

    it('validates members: email shape, unique email, known role', async () => {
      const email = `dup-${Date.now()}@example.com`;
      await http()
        .post('/members')
        .set(owner.auth)
        .send({ data: { email, name: 'A', role: 'VIEWER' } })
        .expect(201);
      expect(
        (
          await http()
            .post('/members')
            .set(owner.auth)
            .send({ data: { email: email.toUpperCase(), name: 'B', role: 'VIEWER' } })
            .expect(409)
        ).body.code,
      ).toBe('dpa:Member:EMAIL_TAKEN');
      const bad = await http()
        .post('/members')
        .set(owner.auth)
        .send({ data: { email: 'not-an-email', name: 'C', role: 'KING' } })
        .expect(400);
      expect(bad.body.details[0].items.join('\n')).toMatch(/data\.email: [\s\S]*data\.role: /);
    });

    it('removing a member revokes their keys', async () => {
      const member = await createMember(app, owner, 'MEMBER');
      await http().get('/projects').set(member.auth).expect(200);
      await http().delete(`/members/${member.memberId}`).set(admin.auth).expect(204);
      expect((await http().get('/projects').set(member.auth).expect(401)).body.code).toBe('dpa:Auth:TOKEN_REVOKED');
      await http().get(`/members/${member.memberId}`).set(owner.auth).expect(404);
    });
  });

  describe('the audit trail', () => {
    it('records each security action with actor, target and request id', async () => {
      const requestId = `audit-${Date.now()}`;
      const member = await http()
        .post('/members')
        .set(admin.auth)
        .set('X-Request-Id', requestId)
        .send({ data: { email: `audited-${Date.now()}@example.com`, name: 'Audited', role: 'VIEWER' } })
        .expect(201);
      const memberId = member.body.data.id;
      await http()
        .patch(`/members/${memberId}`)
        .set(admin.auth)
        .send({ data: { role: 'MEMBER' } })
        .expect(200);
      const key = await http()
        .post('/api-keys')
        .set(admin.auth)
        .send({ data: { name: 'audited', ownerId: memberId } })
        .expect(201);
      await http().post(`/api-keys/${key.body.data.id}/rotate`).set(admin.auth).expect(201);
      await http().delete(`/api-keys/${key.body.data.id}`).set(admin.auth).expect(204);
      await http().delete(`/members/${memberId}`).set(admin.auth).expect(204);
      const events = await http().get('/audit-events').query({ targetId: memberId }).set(admin.auth).expect(200);
      expect(events.body.data.map((e: { action: string }) => e.action)).toEqual(['member.removed', 'member.roleChanged', 'member.created']);
      const created = events.body.data[2];
      expect(created).toMatchObject({
        actor: { type: 'MEMBERSHIP', id: admin.memberId, apiKeyId: admin.apiKeyId },
        targetType: 'member',
        requestId,
        metadata: { role: 'VIEWER' },
      });
      const keyEvents = await http().get('/audit-events').query({ targetType: 'apiKey', targetId: key.body.data.id }).set(admin.auth).expect(200);
      expect(keyEvents.body.data.map((e: { action: string }) => e.action)).toEqual(['apiKey.revoked', 'apiKey.rotated', 'apiKey.created']);
      expect(JSON.stringify(keyEvents.body)).not.toContain(key.body.data.token);
      const byAction = await http().get('/audit-events').query({ action: 'member.roleChanged' }).set(admin.auth).expect(200);
      expect(byAction.body.data.every((e: { action: string }) => e.action === 'member.roleChanged')).toBe(true);
    });

    it('concurrent revocations of one key record one revocation', async () => {
      const key = await http()
        .post('/api-keys')
        .set(admin.auth)
        .send({ data: { name: 'revoked-at-once', ownerId: admin.memberId } })
        .expect(201);
      const results = await Promise.all(Array.from({ length: 6 }, () => http().delete(`/api-keys/${key.body.data.id}`).set(admin.auth)));
      expect(results.map((r) => r.status)).toEqual(Array(6).fill(204));
      const events = await app.get(PrismaService).auditEvent.count({ where: { targetId: key.body.data.id, action: 'apiKey.revoked' } });
      expect(events).toBe(1);
    });

    it('writes in the action transaction: a failed action leaves no record', async () => {
      const prisma = app.get(PrismaService);
      const audit = app.get(AuditService);
      const targetId = `tx-${Date.now()}`;
      await expect(
        prisma.$transaction(async (tx) => {
          await audit.record(tx, { system: 'test' }, { organizationId: owner.organizationId, action: 'member.created', targetType: 'member', targetId });
          throw new Error('the action failed after recording');
        }),
      ).rejects.toThrow('the action failed');
      expect(await prisma.auditEvent.count({ where: { targetId } })).toBe(0);
      // A refused action writes nothing either.
      await http().delete(`/api-keys/${owner.apiKeyId}`).set(admin.auth).expect(403);
      expect(await prisma.auditEvent.count({ where: { targetId: owner.apiKeyId, action: 'apiKey.revoked' } })).toBe(0);
    });

    it('is for ADMINs, and only of their own organization', async () => {
      await http().get('/audit-events').set(viewer.auth).expect(403);
      const stranger = await createTenant(app, 'audit-stranger');
      const theirs = await http().get('/audit-events').query({ limit: 100 }).set(stranger.auth).expect(200);
      expect(theirs.body.data.every((e: { organizationId: string }) => e.organizationId === stranger.organizationId)).toBe(true);
      expect(app.get(ApiKeysService)).toBeDefined();
    });
  });
});

describe('Demotion and removal across processes', () => {
  const apps = useTwoApps();

  it('a member demoted through one process acts with the new role on the next request to the other', async () => {
    const owner = await createTenant(apps.first, 'demote');
    const member = await createMember(apps.first, owner, 'MEMBER');
    await request(apps.second.getHttpServer())
      .post('/projects')
      .set(member.auth)
      .send({ data: { name: 'before' } })
      .expect(201);
    await request(apps.first.getHttpServer())
      .patch(`/members/${member.memberId}`)
      .set(owner.auth)
      .send({ data: { role: 'VIEWER' } })
      .expect(200);
    expect(
      await statusEventually(
        async () =>
          (
            await request(apps.second.getHttpServer())
              .post('/projects')
              .set(member.auth)
              .send({ data: { name: 'after' } })
          ).status,
        403,
      ),
    ).toBe(403);
  });

  it('a removed member and a deleted service account are refused by the other process', async () => {
    const owner = await createTenant(apps.first, 'remove');
    const member = await createMember(apps.first, owner, 'MEMBER');
    const account = await request(apps.first.getHttpServer())
      .post('/service-accounts')
      .set(owner.auth)
      .send({ data: { name: 'ci' } })
      .expect(201);
    const key = await request(apps.first.getHttpServer())
      .post('/api-keys')
      .set(owner.auth)
      .send({ data: { name: 'ci', ownerId: account.body.data.id } })
      .expect(201);
    await request(apps.second.getHttpServer()).get('/projects').set(member.auth).expect(200);
    await request(apps.second.getHttpServer()).get('/projects').set(bearer(key.body.data.token)).expect(200);
    await request(apps.first.getHttpServer()).delete(`/members/${member.memberId}`).set(owner.auth).expect(204);
    await request(apps.first.getHttpServer()).delete(`/service-accounts/${account.body.data.id}`).set(owner.auth).expect(204);
    expect(await statusEventually(async () => (await request(apps.second.getHttpServer()).get('/projects').set(member.auth)).status, 401)).toBe(401);
    expect(await statusEventually(async () => (await request(apps.second.getHttpServer()).get('/projects').set(bearer(key.body.data.token))).status, 401)).toBe(
      401,
    );
  });
});
