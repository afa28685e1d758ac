import type { NestExpressApplication } from '@nestjs/platform-express';
import { compare, rcompare } from 'semver';
import request from 'supertest';
import { PrismaService } from '@/common/prisma/prisma.service';
import { createTestApp } from '../support/app';
import { parseVersion } from '@/modules/module-versions/semver-key';
import { createMember, createModuleVersion, createTenant, type TestTenant } from '../support/factories';

interface Summary {
  id: string;
  moduleDefinitionId: string;
  version: string;
  organizationId?: string;
  config?: unknown;
  versionMajor: number;
  versionPrereleaseSortKey: string;
  versionPrereleaseRank?: number;
}

/** Versions of one definition, published in a shuffled order: releases, prereleases, the semver.org chain, big numbers. */
const VERSIONS_A = [
  '1.0.0-alpha',
  '1.0.0-alpha.1',
  '1.0.0-alpha.beta',
  '1.0.0-beta',
  '1.0.0-beta.2',
  '1.0.0-beta.11',
  '1.0.0-rc.1',
  '1.0.0',
  '0.9.0',
  '0.10.0',
  '1.0.1',
  '1.1.0-rc.1',
  '1.1.0',
  '1.10.0',
  '1.2.0',
  '2.0.0-0',
  '2.0.0-0.3',
  '2.0.0-1',
  '2.0.0-a',
  '2.0.0-A',
  '2.0.0',
  '10.0.0',
  '2.0.0-rc.12345678901234567890',
  '2.0.0-rc.12345678901234567891',
  '2.0.0-rc.9007199254740993',
  '2147483647.0.0+build.1',
  '3.0.0-x-y.1',
  '3.0.0-x.1',
];
const GLOBAL_VERSIONS = ['1.0.0', '1.5.0-beta.1', '1.5.0', '0.1.0'];
const OTHER_VERSIONS = ['1.0.0', '9.9.9'];

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = (i * 7919 + 13) % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** semver.compare rounds numeric identifiers beyond 2^53; compare those as BigInt. */
function exactCompare(a: string, b: string): number {
  const big = /^(\d+\.\d+\.\d+-rc\.)(\d{16,})$/;
  const [ma, mb] = [a.split('+')[0].match(big), b.split('+')[0].match(big)];
  if (ma && mb && ma[1] === mb[1]) return BigInt(ma[2]) < BigInt(mb[2]) ? -1 : BigInt(ma[2]) > BigInt(mb[2]) ? 1 : 0;
  return compare(a, b);
}

/** The lists' order: precedence descending, then id descending. */
function expectedOrder(items: { id: string; version: string }[]): string[] {
  return [...items].sort((x, y) => -exactCompare(x.version, y.version) || (x.id < y.id ? 1 : x.id > y.id ? -1 : 0)).map((x) => x.id);
}

describe('Module versions', () => {
  let app: NestExpressApplication;
  let owner: TestTenant;
  let other: TestTenant;
  let superadmin: TestTenant;
  let viewer: TestTenant;
  let definitionA: string;
  let definitionA2: string;
  let definitionGlobal: string;
  let definitionOther: string;
  const published: Record<string, { id: string; version: string; moduleDefinitionId: string }[]> = {};
  const http = () => request(app.getHttpServer());

  async function define(tenant: TestTenant, name: string, global = false): Promise<string> {
    const response = await http().post('/module-definitions').set(tenant.auth).send({ data: { name, global } }).expect(201);
    return response.body.data.id;
  }

  function publish(tenant: TestTenant, moduleDefinitionId: string, version: string, config: object = { v: version }) {
    return http()
      .post('/module-versions')
      .set(tenant.auth)
      .send({ data: { moduleDefinitionId, version, description: `Version ${version}`, config } });
  }

  async function walk(path: string, auth: Record<string, string>, limit: number): Promise<{ pages: Summary[][]; totalCounts: number[] }> {
    const pages: Summary[][] = [];
    const totalCounts: number[] = [];
    let cursor: string | undefined;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const response = await http()
        .get(`${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`)
        .set(auth)
        .expect(200);
      pages.push(response.body.data);
      totalCounts.push(response.body.meta.totalCount);
      cursor = response.body.meta.nextCursor;
      expect(pages.length).toBeLessThan(200);
    } while (cursor);
    return { pages, totalCounts };
  }

  beforeAll(async () => {
    app = await createTestApp();
    [owner, other, superadmin] = await Promise.all([
      createTenant(app, 'mv-owner'),
      createTenant(app, 'mv-other'),
      createTenant(app, 'mv-super', { superadmin: true }),
    ]);
    viewer = await createMember(app, owner, 'VIEWER');
    definitionA = await define(owner, 'vpc');
    definitionA2 = await define(owner, 'eks');
    definitionOther = await define(other, 'vpc');
    definitionGlobal = await define(superadmin, `global-${owner.organizationId}`, true);
    const plan: [TestTenant, string, readonly string[]][] = [
      [owner, definitionA, VERSIONS_A],
      [owner, definitionA2, ['1.0.0', '2.0.0-beta', '0.0.1']],
      [superadmin, definitionGlobal, GLOBAL_VERSIONS],
      [other, definitionOther, OTHER_VERSIONS],
    ];
    for (const [tenant, definition, versions] of plan) {
      published[definition] = [];
      for (const version of shuffled(versions)) {
        const response = await publish(tenant, definition, version);
        expect([version, response.status]).toEqual([version, 201]);
        published[definition].push(response.body.data);
      }
    }
  });

  afterAll(async () => {
    await app.close();
  });

  describe('publishing', () => {
    it('returns the ModuleVersion with the principal as creator and the organization of the definition', async () => {
      const definition = await define(owner, 'publish-shape');
      const response = await publish(owner, definition, '1.2.3-rc.1+build.42', { region: 'eu', nested: { list: [1, 2] } }).expect(201);
      expect(response.body.data).toEqual({
        id: expect.any(String),
        moduleDefinitionId: definition,
        version: '1.2.3-rc.1+build.42',
        description: 'Version 1.2.3-rc.1+build.42',
        config: { region: 'eu', nested: { list: [1, 2] } },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        createdById: owner.memberId,
        organizationId: owner.organizationId,
      });
    });

    it.each([
      ['v1.0.0', /semantic version/],
      ['1.0', /semantic version/],
      ['01.0.0', /leading zeros/],
      ['1.0.0-rc.01', /leading zeros/],
      ['1.0.0-', /semantic version/],
      ['1.0.0+', /semantic version/],
      ['2147483648.0.0', /at most 2147483647/],
      ['1.99999999999.0', /at most 2147483647/],
      [`1.0.0-${'a'.repeat(130)}`, /at most 128/],
      [`1.0.0-${'1'.repeat(62)}`, /at most 61 digits/],
    ])('refuses version %s with a 400 naming the field', async (version, reason) => {
      const response = await publish(owner, definitionA, version).expect(400);
      expect(response.body.code).toBe('dpa:Request:VALIDATION_FAILED');
      expect(response.body.details[0].items.join('\n')).toMatch(new RegExp(`data\\.version: .*${reason.source}`));
    });

    it('refuses a non-string version, a missing field and an unknown field', async () => {
      const base = { moduleDefinitionId: definitionA, version: '7.0.0', description: 'x', config: {} };
      for (const data of [
        { ...base, version: 7 },
        { ...base, config: undefined },
        { ...base, extra: true },
        { ...base, description: undefined },
        { ...base, moduleDefinitionId: ['a'] },
      ]) {
        const response = await http().post('/module-versions').set(owner.auth).send({ data }).expect(400);
        expect(response.body.code).toMatch(/^dpa:Request:/);
      }
    });

    it('answers 409 for a version equal by precedence, build metadata ignored, and keeps build metadata in the stored version', async () => {
      const definition = await define(owner, 'duplicates');
      const first = await publish(owner, definition, '1.0.0+a').expect(201);
      expect(first.body.data.version).toBe('1.0.0+a');
      for (const version of ['1.0.0+a', '1.0.0+b', '1.0.0']) {
        const response = await publish(owner, definition, version).expect(409);
        expect(response.body.code).toBe('dpa:ModuleVersion:VERSION_EXISTS');
        expect(response.body.metadata.existingVersion).toBe('1.0.0+a');
      }
      await publish(owner, definition, '1.0.0-rc.1+x').expect(201);
      await publish(owner, definition, '1.0.0-rc.1').expect(409);
      // The same version in another definition is fine.
      await publish(owner, definitionA2, '1.0.0-rc.1').expect(201);
    });

    it('refuses a config that is not an object, too large or too deep, saying the bound', async () => {
      const deep: Record<string, unknown> = {};
      let cursor = deep;
      for (let i = 0; i < 10; i++) cursor = cursor.next = {} as Record<string, unknown>;
      const cases: [unknown, RegExp][] = [
        [[1, 2], /JSON object/],
        ['text', /JSON object/],
        [null, /must not be null/],
        [{ blob: 'x'.repeat(17_000) }, /at most 16384 bytes/],
        [deep, /at most 8 levels/],
      ];
      for (const [config, reason] of cases) {
        const response = await http()
          .post('/module-versions')
          .set(owner.auth)
          .send({ data: { moduleDefinitionId: definitionA, version: '8.0.0', description: 'x', config } })
          .expect(400);
        expect(response.body.details[0].items.join('\n')).toMatch(new RegExp(`data\\.config: .*${reason.source}`));
      }
      await publish(owner, definitionA2, '8.0.0', { blob: 'x'.repeat(16_000), a: { b: { c: { d: { e: { f: { g: 1 } } } } } } }).expect(201);
    });

    it('keeps global definitions to superadmins: creating one or publishing to one is a 403 for others', async () => {
      const create = await http()
        .post('/module-definitions')
        .set(owner.auth)
        .send({ data: { name: 'sneaky', global: true } })
        .expect(403);
      expect(create.body.code).toBe('dpa:ModuleDefinition:GLOBAL_REQUIRES_SUPERADMIN');
      const response = await publish(owner, definitionGlobal, '99.0.0').expect(403);
      expect(response.body.code).toBe('dpa:ModuleDefinition:GLOBAL_REQUIRES_SUPERADMIN');
      const global = published[definitionGlobal][0] as Summary;
      expect(global.organizationId).toBeUndefined();
    });

    it('answers 404 for a definition of another organization or none, and 403 to a VIEWER', async () => {
      expect((await publish(owner, definitionOther, '5.0.0').expect(404)).body.code).toBe('dpa:ModuleDefinition:NOT_FOUND');
      await publish(owner, '0199a000-0000-7000-8000-000000000000', '5.0.0').expect(404);
      await publish(viewer, definitionA, '5.0.0').expect(403);
    });
  });

  describe('definitions', () => {
    it('keeps names unique per owner, global included', async () => {
      expect(
        (
          await http()
            .post('/module-definitions')
            .set(owner.auth)
            .send({ data: { name: 'vpc' } })
            .expect(409)
        ).body.code,
      ).toBe('dpa:ModuleDefinition:NAME_TAKEN');
      await http()
        .post('/module-definitions')
        .set(superadmin.auth)
        .send({ data: { name: `global-${owner.organizationId}`, global: true } })
        .expect(409);
      // The same name for another owner is fine (definitionOther is also 'vpc').
      await http()
        .post('/module-definitions')
        .set(superadmin.auth)
        .send({ data: { name: 'vpc' } })
        .expect(201);
    });

    it("lists and gets the organization's and the global definitions, never another organization's", async () => {
      const ids = (await walk('/module-definitions', owner.auth, 100)).pages.flat().map((d) => d.id);
      expect(ids).toEqual(expect.arrayContaining([definitionA, definitionA2, definitionGlobal]));
      expect(ids).not.toContain(definitionOther);
      const global = await http().get(`/module-definitions/${definitionGlobal}`).set(other.auth).expect(200);
      expect(global.body.data).toMatchObject({ id: definitionGlobal, global: true });
      expect(global.body.data.organizationId).toBeUndefined();
      await http().get(`/module-definitions/${definitionOther}`).set(owner.auth).expect(404);
    });
  });

  describe.each(['/module-versions/summaries', '/module-versions'])('%s', (path) => {
    const isSummary = path.endsWith('summaries');

    it('lists one definition in exact semver order, newest first, with the spec fields', async () => {
      const response = await http().get(`${path}?moduleDefinitionId=${definitionA}&limit=100`).set(owner.auth).expect(200);
      const data: Summary[] = response.body.data;
      expect(data.map((v) => v.id)).toEqual(expectedOrder(published[definitionA]));
      expect(data.map((v) => v.version).slice(0, 3)).toEqual(['2147483647.0.0+build.1', '10.0.0', '3.0.0-x-y.1']);
      expect(response.body.meta).toEqual({ limit: 100, totalCount: published[definitionA].length });
      for (const item of data) {
        if (isSummary) {
          expect(item.config).toBeUndefined();
          expect(Object.keys(item).sort()).toEqual(
            [
              'id',
              'moduleDefinitionId',
              'version',
              'description',
              'versionMajor',
              'versionMinor',
              'versionPatch',
              'versionPrereleaseSortKey',
              'createdAt',
              'updatedAt',
              'createdById',
              'organizationId',
              ...(item.version.split('+')[0].includes('-') ? ['versionPrereleaseRank'] : []),
            ].sort(),
          );
        } else {
          expect(item.config).toEqual({ v: item.version });
          expect(item.versionMajor).toBeUndefined();
        }
      }
    });

    it('filters by minVersion, inclusive by precedence, prereleases compared exactly', async () => {
      const cases: [string, (v: string) => boolean][] = [
        ['1.0.0', (v) => exactCompare(v, '1.0.0') >= 0],
        ['1.0.0-beta', (v) => exactCompare(v, '1.0.0-beta') >= 0],
        ['1.0.0+anything', (v) => exactCompare(v, '1.0.0') >= 0],
        ['2.0.0-rc.12345678901234567891', (v) => exactCompare(v, '2.0.0-rc.12345678901234567891') >= 0],
        ['0.0.0', () => true],
        ['2147483647.0.0', (v) => v.startsWith('2147483647.')],
        ['3000.0.0', (v) => v.startsWith('2147483647.')],
        // Bounds inside and between (major, minor) pairs: the total adds later pairs' counters to the bound's own pair.
        ['1.1.0', (v) => exactCompare(v, '1.1.0') >= 0],
        ['1.1.0-rc.1', (v) => exactCompare(v, '1.1.0-rc.1') >= 0],
        ['1.2.0-rc.1', (v) => exactCompare(v, '1.2.0-rc.1') >= 0],
        ['0.10.0', (v) => exactCompare(v, '0.10.0') >= 0],
        ['1.0.1', (v) => exactCompare(v, '1.0.1') >= 0],
        ['2.0.1', (v) => exactCompare(v, '2.0.1') >= 0],
      ];
      for (const [minVersion, keep] of cases) {
        const response = await http()
          .get(`${path}?moduleDefinitionId=${definitionA}&minVersion=${encodeURIComponent(minVersion)}&limit=100`)
          .set(owner.auth)
          .expect(200);
        const expected = expectedOrder(published[definitionA].filter((v) => keep(v.version)));
        expect([minVersion, response.body.data.map((v: Summary) => v.id)]).toEqual([minVersion, expected]);
        expect(response.body.meta.totalCount).toBe(expected.length);
        const releases = await http()
          .get(`${path}?moduleDefinitionId=${definitionA}&minVersion=${encodeURIComponent(minVersion)}&includePrereleases=false&limit=1`)
          .set(owner.auth)
          .expect(200);
        const expectedReleases = published[definitionA].filter((v) => keep(v.version) && !v.version.split('+')[0].includes('-'));
        expect([minVersion, releases.body.meta.totalCount]).toEqual([minVersion, expectedReleases.length]);
      }
    });

    it('refuses minVersion without moduleDefinitionId, and a minVersion that is not a version', async () => {
      const response = await http().get(`${path}?minVersion=1.0.0`).set(owner.auth).expect(400);
      expect(response.body.details[0].items.join('\n')).toMatch(/minVersion: .*requires moduleDefinitionId/);
      for (const bad of ['1.0', 'latest', '01.0.0', '4294967296.0.0']) {
        const invalid = await http().get(`${path}?moduleDefinitionId=${definitionA}&minVersion=${bad}`).set(owner.auth).expect(400);
        expect(invalid.body.details[0].items.join('\n')).toMatch(/^minVersion: /m);
      }
      await http().get(`${path}?moduleDefinitionId=${definitionA}&minVersion=1.0.0&minVersion=2.0.0`).set(owner.auth).expect(400);
    });

    it('filters by moduleDefinitionIds (repeated or comma-separated), combined with the other filters', async () => {
      const mine = [...published[definitionA], ...published[definitionA2].filter((v) => v.moduleDefinitionId === definitionA2), ...published[definitionGlobal]];
      const visible = (await walk(`/module-versions/summaries?moduleDefinitionIds=${definitionA2}`, owner.auth, 100)).pages.flat();
      const a2 = visible.map((v) => ({ id: v.id, version: v.version }));
      const expectedAll = expectedOrder([...published[definitionA], ...a2, ...published[definitionGlobal]]);
      expect(mine.length).toBeGreaterThan(0);
      const comma = await http()
        .get(`${path}?moduleDefinitionIds=${definitionA},${definitionA2},${definitionGlobal},${definitionOther}&limit=100`)
        .set(owner.auth)
        .expect(200);
      expect(comma.body.data.map((v: Summary) => v.id)).toEqual(expectedAll);
      expect(comma.body.meta.totalCount).toBe(expectedAll.length);
      const repeated = await http()
        .get(
          `${path}?moduleDefinitionIds=${definitionA}&moduleDefinitionIds=${definitionA2}&moduleDefinitionIds=${definitionGlobal}&moduleDefinitionIds=${definitionOther}&limit=100`,
        )
        .set(owner.auth)
        .expect(200);
      expect(repeated.body.data.map((v: Summary) => v.id)).toEqual(expectedAll);
      // With moduleDefinitionId too, both must match; with minVersion and includePrereleases=false too.
      const both = await http()
        .get(`${path}?moduleDefinitionIds=${definitionA},${definitionGlobal}&moduleDefinitionId=${definitionGlobal}&limit=100`)
        .set(owner.auth)
        .expect(200);
      expect(both.body.data.map((v: Summary) => v.id)).toEqual(expectedOrder(published[definitionGlobal]));
      const disjoint = await http().get(`${path}?moduleDefinitionIds=${definitionA}&moduleDefinitionId=${definitionGlobal}`).set(owner.auth).expect(200);
      expect(disjoint.body).toEqual({ data: [], meta: { limit: 20, totalCount: 0 } });
      const all = await http()
        .get(
          `${path}?moduleDefinitionIds=${definitionA},${definitionGlobal}&moduleDefinitionId=${definitionA}&minVersion=1.0.0-rc.1&includePrereleases=false&limit=100`,
        )
        .set(owner.auth)
        .expect(200);
      expect(all.body.data.map((v: Summary) => v.version)).toEqual(
        VERSIONS_A.filter((v) => !v.split('+')[0].includes('-') && compare(v, '1.0.0-rc.1') >= 0).sort(rcompare),
      );
      // Another organization's definition is never listed, even by id.
      const foreign = await http().get(`${path}?moduleDefinitionId=${definitionOther}`).set(owner.auth).expect(200);
      expect(foreign.body).toEqual({ data: [], meta: { limit: 20, totalCount: 0 } });
    });

    it('accepts 50 moduleDefinitionIds and refuses 51, naming the limit', async () => {
      const fifty = [definitionA, ...Array.from({ length: 49 }, (_, i) => `0199a000-0000-7000-8000-${String(i).padStart(12, '0')}`)];
      const ok = await http()
        .get(`${path}?moduleDefinitionIds=${fifty.join(',')}&limit=1`)
        .set(owner.auth)
        .expect(200);
      expect(ok.body.meta.totalCount).toBe(published[definitionA].length);
      // 50 as a repeated parameter (how generated clients send arrays): past 20, Express's qs made an object of them.
      for (const count of [21, 50]) {
        const repeated = await http()
          .get(
            `${path}?${fifty
              .slice(0, count)
              .map((id) => `moduleDefinitionIds=${id}`)
              .join('&')}&limit=1`,
          )
          .set(owner.auth)
          .expect(200);
        expect(repeated.body.meta.totalCount).toBe(published[definitionA].length);
      }
      for (const query of [`moduleDefinitionIds=${[...fifty, 'x'].join(',')}`, [...fifty, 'x'].map((id) => `moduleDefinitionIds=${id}`).join('&')]) {
        const response = await http().get(`${path}?${query}`).set(owner.auth).expect(400);
        expect(response.body.details[0].items.join('\n')).toMatch(/moduleDefinitionIds: .*at most 50/);
      }
      for (const bad of ['', 'a;b', 'x'.repeat(65)])
        await http()
          .get(`${path}?moduleDefinitionIds=${encodeURIComponent(bad)}`)
          .set(owner.auth)
          .expect(400);
    });

    it('filters out prereleases with includePrereleases=false', async () => {
      const response = await http().get(`${path}?moduleDefinitionId=${definitionA}&includePrereleases=false&limit=100`).set(owner.auth).expect(200);
      const expected = expectedOrder(published[definitionA].filter((v) => !v.version.split('+')[0].includes('-')));
      expect(response.body.data.map((v: Summary) => v.id)).toEqual(expected);
      expect(response.body.meta.totalCount).toBe(expected.length);
      await http().get(`${path}?includePrereleases=maybe`).set(owner.auth).expect(400);
    });

    it('renders every version as JSON.stringify writes its DTO, byte for byte: texts to escape, global and prerelease fields', async () => {
      // The lists write their JSON from Postgres' text: this checks it against the DTOs publish builds from Prisma's rows.
      const escapes = await define(owner, `escapes-${isSummary ? 'summaries' : 'versions'}`);
      const description = 'quote " backslash \\ slash / \n \t \r \b \f \u0001 \u001f \u007f \u2028 \u2029 é 漢字 😀 <script>';
      const config = { z: 1, a: [1.5, null, 1e21, -0, { '10': 'x', '2': true }], 'k"e\\y': 'v\n', é: { deep: [[]] } };
      const mine = [];
      for (const version of ['1.0.0', '1.1.0-rc.1+b.7']) {
        const response = await http()
          .post('/module-versions')
          .set(owner.auth)
          .send({ data: { moduleDefinitionId: escapes, version, description, config } })
          .expect(201);
        mine.push(response.body.data);
      }
      // Instants whose milliseconds end in zeros, which Postgres' text drops (`.1`, `.12`, none at all).
      const instants = ['2026-01-02T03:04:05.000Z', '2026-01-02T03:04:05.100Z', '2026-01-02T03:04:05.120Z', '1999-12-31T23:59:59.999Z'];
      for (const [i, version] of mine.entries()) {
        const [createdAt, updatedAt] = [instants[i * 2], instants[i * 2 + 1]];
        await app
          .get(PrismaService, { strict: false })
          .moduleVersion.update({ where: { id: version.id }, data: { createdAt: new Date(createdAt), updatedAt: new Date(updatedAt) } });
        Object.assign(version, { createdAt, updatedAt });
      }
      const byId = new Map([...mine, ...published[definitionGlobal], ...published[definitionA]].map((v) => [v.id, v as Record<string, unknown>]));
      const expected = (dto: Record<string, unknown>): unknown => {
        if (!isSummary) return dto;
        const { config: _config, ...fields } = dto;
        const parsed = parseVersion(dto.version as string);
        if (!parsed.ok) throw new Error(parsed.reason);
        const { versionPrereleaseRank, ...order } = parsed.version.columns;
        return { ...fields, ...order, ...(versionPrereleaseRank === null ? {} : { versionPrereleaseRank }) };
      };
      for (const definition of [escapes, definitionGlobal, definitionA]) {
        const response = await http().get(`${path}?moduleDefinitionId=${definition}&limit=100`).set(owner.auth).expect(200);
        expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(response.text).toBe(JSON.stringify(response.body));
        expect(response.body.data.length).toBeGreaterThan(1);
        for (const item of response.body.data as { id: string }[]) expect(JSON.stringify(item)).toBe(JSON.stringify(expected(byId.get(item.id)!)));
      }
      const [newest] = (await http().get(`${path}?moduleDefinitionId=${escapes}&limit=1`).set(owner.auth).expect(200)).body.data;
      const sent = isSummary ? { versionPrereleaseRank: 2 } : { config: JSON.parse(JSON.stringify(config)) };
      expect(newest).toMatchObject({ description, version: '1.1.0-rc.1+b.7', ...sent });
    });

    it("shows the organization's and the global versions, never another organization's", async () => {
      const mineAndGlobal = (await walk(path, owner.auth, 100)).pages.flat();
      const otherIds = new Set(published[definitionOther].map((v) => v.id));
      expect(mineAndGlobal.some((v) => otherIds.has(v.id))).toBe(false);
      expect(mineAndGlobal.map((v) => v.id)).toEqual(expect.arrayContaining(published[definitionGlobal].map((v) => v.id)));
      expect(mineAndGlobal.every((v) => v.organizationId === owner.organizationId || v.organizationId === undefined)).toBe(true);
      const theirs = (await walk(path, other.auth, 100)).pages.flat();
      expect(theirs.map((v) => v.id).sort()).toEqual(expect.arrayContaining([...otherIds]));
      expect(theirs.every((v) => v.organizationId === other.organizationId || v.organizationId === undefined)).toBe(true);
      expect(theirs.some((v) => v.moduleDefinitionId === definitionA)).toBe(false);
    });

    it.each([
      ['one definition', () => `?moduleDefinitionId=${definitionA}`],
      ['several definitions', () => `?moduleDefinitionIds=${definitionA},${definitionA2},${definitionGlobal}`],
      ['every visible version', () => ''],
    ])('walks %s page by page in exact semver order, every version once', async (_, query) => {
      const { pages, totalCounts } = await walk(`${path}${query()}`, owner.auth, 3);
      const all = (
        await http()
          .get(`${path}${query()}${query() ? '&' : '?'}limit=100`)
          .set(owner.auth)
          .expect(200)
      ).body.data as Summary[];
      const walked = pages.flat();
      expect(walked.map((v) => v.id)).toEqual(expectedOrder(all));
      expect(new Set(walked.map((v) => v.id)).size).toBe(walked.length);
      expect(walked.length).toBe(totalCounts[0]);
      expect(new Set(totalCounts).size).toBe(1);
      for (const page of pages) expect(page.map((v) => v.id)).toEqual(expectedOrder(page));
    });

    it('refuses a cursor of another list, a tampered cursor and a bad limit', async () => {
      const projects = await http()
        .post('/projects')
        .set(owner.auth)
        .send({ data: { name: `p-${path}` } })
        .expect(201);
      expect(projects.body.data.id).toBeDefined();
      await http()
        .post('/projects')
        .set(owner.auth)
        .send({ data: { name: `q-${path}` } })
        .expect(201);
      const projectCursor = (await http().get('/projects?limit=1').set(owner.auth).expect(200)).body.meta.nextCursor;
      const tampered = [
        projectCursor,
        Buffer.from(JSON.stringify(['module-versions', 1, 0, 0, 'not a key', 'id'])).toString('base64url'),
        Buffer.from(JSON.stringify(['module-versions', 2147483648, 0, 0, '~', 'id'])).toString('base64url'),
        Buffer.from(JSON.stringify(['module-versions', 1, 0, 0, '~'])).toString('base64url'),
        Buffer.from(JSON.stringify(['module-versions', 1.5, 0, 0, '~', 'id'])).toString('base64url'),
        'not-a-cursor',
      ];
      for (const cursor of tampered)
        expect((await http().get(`${path}?cursor=${cursor}`).set(owner.auth).expect(400)).body.code).toBe('dpa:Pagination:INVALID_CURSOR');
      await http().get(`${path}?limit=101`).set(owner.auth).expect(400);
      await http()
        .get(`${path}?moduleDefinitionId=${encodeURIComponent("x' OR 1=1 --")}`)
        .set(owner.auth)
        .expect(400);
    });
  });

  it("keeps each definition's version and release counters (the lists' totals) equal to its versions, and refuses moving a version", async () => {
    const prisma = app.get(PrismaService, { strict: false });
    const ids = [definitionA, definitionA2, definitionGlobal, definitionOther];
    const counted = await prisma.$queryRaw<{ id: string; versions: number; releases: number; versionCount: number; releaseCount: number }[]>`
      SELECT d."id", d."versionCount", d."releaseCount", count(v."id")::int AS "versions",
        (count(v."id") FILTER (WHERE v."versionPrereleaseSortKey" = '~'))::int AS "releases"
      FROM "ModuleDefinition" d LEFT JOIN "ModuleVersion" v ON v."moduleDefinitionId" = d."id"
      WHERE d."id" = ANY(${ids}::text[]) GROUP BY d."id"`;
    expect(counted).toHaveLength(4);
    for (const row of counted) expect([row.versionCount, row.releaseCount]).toEqual([row.versions, row.releases]);
    expect(counted.find((r) => r.id === definitionA)?.versionCount).toBe(published[definitionA].length);
    // And per (major, minor) pair, which the totals from a lower bound read.
    const pairs = await prisma.$queryRaw<
      { id: string; major: number; minor: number; kept: number | null; versions: number; keptReleases: number | null; releases: number }[]
    >`
      SELECT v."moduleDefinitionId" AS id, v."versionMajor" AS major, v."versionMinor" AS minor, count(*)::int AS versions,
        (count(*) FILTER (WHERE v."versionPrereleaseSortKey" = '~'))::int AS releases, min(c."versionCount") AS kept, min(c."releaseCount") AS "keptReleases"
      FROM "ModuleVersion" v LEFT JOIN "ModuleVersionMinorCount" c
        ON (c."moduleDefinitionId", c."versionMajor", c."versionMinor") = (v."moduleDefinitionId", v."versionMajor", v."versionMinor")
      WHERE v."moduleDefinitionId" = ANY(${ids}::text[]) GROUP BY 1, 2, 3`;
    expect(pairs.length).toBeGreaterThan(10);
    for (const pair of pairs)
      expect([pair.id, pair.major, pair.minor, pair.kept, pair.keptReleases]).toEqual([pair.id, pair.major, pair.minor, pair.versions, pair.releases]);
    // A list over whole definitions reads its total from them: the organization's and the global definition's versions.
    const both = await http()
      .get(`/module-versions/summaries?moduleDefinitionIds=${definitionA},${definitionGlobal}&includePrereleases=false`)
      .set(owner.auth)
      .expect(200);
    const releases = (id: string) => counted.find((r) => r.id === id)?.releases ?? -1;
    expect(both.body.meta.totalCount).toBe(releases(definitionA) + releases(definitionGlobal));
    // Moving a version to another definition would make two counters wrong: the database refuses it.
    await expect(prisma.moduleVersion.update({ where: { id: published[definitionA][0].id }, data: { moduleDefinitionId: definitionA2 } })).rejects.toThrow(
      /immutable/,
    );
    await expect(prisma.moduleVersion.update({ where: { id: published[definitionA][0].id }, data: { versionMinor: 99 } })).rejects.toThrow(/immutable/);
    // A new version counts at once, in the publishing transaction.
    await publish(owner, definitionA2, '7.0.0').expect(201);
    const after = await prisma.moduleDefinition.findUniqueOrThrow({ where: { id: definitionA2 } });
    expect([after.versionCount, after.releaseCount]).toEqual([
      counted.find((r) => r.id === definitionA2)!.versions + 1,
      counted.find((r) => r.id === definitionA2)!.releases + 1,
    ]);
  });

  it("keeps the owner counters (the total of every visible version) equal to each organization's and the global versions, and a version in its definition's organization", async () => {
    const prisma = app.get(PrismaService, { strict: false });
    // One snapshot: the counters are written in the publishing transaction, so they match the rows at any instant.
    const drift = () => prisma.$queryRaw<{ ownerId: string | null; kept: number | null; versions: number | null }[]>`
      SELECT coalesce(c."ownerId", v."ownerId") AS "ownerId", c."versionCount" AS kept, v.versions
      FROM "ModuleVersionOwnerCount" c FULL JOIN (
        SELECT coalesce("organizationId", '') AS "ownerId", count(*)::int AS versions FROM "ModuleVersion" GROUP BY 1
      ) v ON v."ownerId" = c."ownerId"
      WHERE c."versionCount" IS DISTINCT FROM v.versions
        OR c."releaseCount" IS DISTINCT FROM (SELECT count(*)::int FROM "ModuleVersion" r WHERE coalesce(r."organizationId", '') = c."ownerId" AND r."versionPrereleaseSortKey" = '~')`;
    expect(await drift()).toEqual([]);
    const owners = await prisma.moduleVersionOwnerCount.findMany({ where: { ownerId: { in: [owner.organizationId, other.organizationId, ''] } } });
    expect(owners.map((o) => o.ownerId).sort()).toEqual(['', owner.organizationId, other.organizationId].sort());

    // The list of every visible version reads them: the organization's row and the global one, releases or all.
    const visible = (releases: boolean) =>
      prisma.moduleVersion.count({
        where: { OR: [{ organizationId: owner.organizationId }, { organizationId: null }], ...(releases ? { versionPrereleaseSortKey: '~' } : {}) },
      });
    for (const releasesOnly of [false, true]) {
      const [listed, counted] = await Promise.all([
        http()
          .get(`/module-versions/summaries?limit=1${releasesOnly ? '&includePrereleases=false' : ''}`)
          .set(owner.auth)
          .expect(200),
        visible(releasesOnly),
      ]);
      expect([releasesOnly, listed.body.meta.totalCount]).toEqual([releasesOnly, counted]);
    }

    // A version is in its definition's organization: another one is refused, and neither changes.
    for (const organizationId of [other.organizationId, null])
      await expect(createModuleVersion(app, owner, '9.9.9', { moduleDefinitionId: definitionA, organizationId })).rejects.toThrow(/definition's/);
    await expect(prisma.moduleVersion.update({ where: { id: published[definitionA][0].id }, data: { organizationId: other.organizationId } })).rejects.toThrow(
      /immutable/,
    );
    await expect(prisma.moduleDefinition.update({ where: { id: definitionA2 }, data: { organizationId: other.organizationId } })).rejects.toThrow(/immutable/);

    // An organization deleted with its versions leaves no counter behind; its versions leave the global row alone.
    const gone = await prisma.organization.create({ data: { name: `mv-gone-${owner.organizationId}` } });
    const definition = await prisma.moduleDefinition.create({ data: { organizationId: gone.id, name: 'gone' } });
    await createModuleVersion(app, owner, '9.9.9', { moduleDefinitionId: definition.id }); // in the definition's organization, not the owner's
    expect(await prisma.moduleVersionOwnerCount.findUnique({ where: { ownerId: gone.id } })).toMatchObject({ versionCount: 1, releaseCount: 1 });
    await prisma.organization.delete({ where: { id: gone.id } });
    expect(await prisma.moduleVersionOwnerCount.findUnique({ where: { ownerId: gone.id } })).toBeNull();
    expect(await drift()).toEqual([]);
  });

  it('reads no config for summaries (the SQL selects none)', async () => {
    const { ModuleVersionsRepository } = await import('@/modules/module-versions/module-versions.repository');
    const repository = app.get(ModuleVersionsRepository, { strict: false });
    const sql = repository.pageSql({ organizationId: owner.organizationId, definitionIds: [definitionA], releasesOnly: false }, false, undefined, 10);
    expect(repository.countSql({ organizationId: owner.organizationId, releasesOnly: false }).sql).not.toContain('config');
    // Every visible version's total reads the owner counters, not the versions.
    expect(repository.countSql({ organizationId: owner.organizationId, releasesOnly: true }).sql).toMatch(
      /FROM "ModuleVersionOwnerCount"[^]*"releaseCount"|"releaseCount"[^]*FROM "ModuleVersionOwnerCount"/,
    );
    expect(repository.countSql({ organizationId: owner.organizationId, releasesOnly: false }).sql).not.toContain('"ModuleVersion" v');
    expect(sql.sql).not.toContain('config');
    expect(repository.pageSql({ organizationId: owner.organizationId, releasesOnly: false }, true, undefined, 10).sql).toContain('"config"');
  });
});
