/**
 * `npm run bench:module-versions`: the module-version lists against the plain GET /projects list,
 * over HTTP with autocannon, on the built API, in the same run. Seeds 100,000 versions over 1,000
 * definitions (700 of the measured organization, 200 global, 100 of another organization; one busy
 * definition with 6,000 versions; a mix of releases, rc and beta prereleases and build metadata),
 * then measures each target (50 connections, 10 s after a warm-up) and prints req/s, p99, the ratio
 * to the projects list, and EXPLAIN (ANALYZE, BUFFERS) of each module-version query.
 * Each request is measured on two APIs side by side: statements unnamed (DATABASE_PREPARED_STATEMENTS=false)
 * and prepared once per connection (the default); with BENCH_COMPARE_DIST, also on two more APIs (both
 * settings) built from another checkout (e.g. main's, to measure a change before and after in one run). Besides
 * req/s, each row gives the API process's CPU time per request (from /proc; Linux), which a loaded
 * machine disturbs less than req/s.
 * Environment: BENCH_DURATION_S, BENCH_ROUNDS, BENCH_PORT (and the next three ports), BENCH_DATABASE (a database of its own,
 * dropped and re-created), BENCH_VARIANT (`unnamed`, `prepared` or `compare`: only that API), BENCH_COMPARE_DIST
 * (the root of another built checkout: its dist/main.js runs on this data).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Client } from 'pg';
import { PrismaPg } from '@prisma/adapter-pg';
import { decodeCursor } from '@/common/pagination/pagination';
import { migrate } from '@/common/prisma/migration-runner';
import type { PrismaService } from '@/common/prisma/prisma.service';
import { PrismaClient, type Prisma } from '@/generated/prisma/client';
import { MODULE_VERSION_SUMMARY_KEYSET } from '@/modules/module-versions/module-versions.keyset';
import { ModuleVersionsRepository, type VersionListFilter } from '@/modules/module-versions/module-versions.repository';
import { parseVersion } from '@/modules/module-versions/semver-key';
import { buildIfStale } from '@tools/workspace/build';
import { createBenchOwnerKey } from '../support';
import { CONNECTIONS, drive, productionEnv, waitForOk, type Measurement } from '../http-drive';
import { ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';

const DEFINITIONS = { own: 700, global: 200, other: 100 };
const TOTAL_VERSIONS = 100_000;
const BUSY_DEFINITION_VERSIONS = 6_000;
const DEEP_OFFSET = 5_000;
const PROJECTS = 1_000;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 3;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const API_PORT = Number(process.env.BENCH_PORT ?? 3911);
const DATABASE = process.env.BENCH_DATABASE ?? 'delivery_platform_bench_module_versions';

/** The i-th version of a definition: distinct per i; 60% releases, 20% rc, 20% beta, some with build metadata. */
function versionAt(i: number): string {
  const base = `${Math.floor(i / 100)}.${Math.floor(i / 10) % 10}.${i % 10}`;
  switch (i % 5) {
    case 3:
      return `${base}-rc.${(i % 7) + 1}`;
    case 4:
      return `${base}-beta.${(i % 11) + 1}.${i % 2 ? 'linux' : '2'}`;
    default:
      return i % 13 === 0 ? `${base}+build.${i}` : base;
  }
}

interface Seeded {
  token: string;
  organizationId: string;
  typicalDefinition: string;
  busyDefinition: string;
  fiftyDefinitions: string[];
}

async function seed(databaseUrl: string): Promise<Seeded> {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  try {
    const [own, other] = [
      await prisma.organization.create({ data: { name: 'bench-modules' } }),
      await prisma.organization.create({ data: { name: 'bench-other' } }),
    ];
    const { ownerId, token } = await createBenchOwnerKey(prisma, own.id);
    const base = Date.now() - PROJECTS * 1000;
    await prisma.project.createMany({
      data: Array.from({ length: PROJECTS }, (_, i) => ({
        organizationId: own.id,
        givenId: `project-${i}`,
        name: `Project ${i}`,
        createdAt: new Date(base + i * 1000),
      })),
    });

    const owners = [...Array(DEFINITIONS.own).fill(own.id), ...Array(DEFINITIONS.global).fill(null), ...Array(DEFINITIONS.other).fill(other.id)] as (
      string | null
    )[];
    const definitions = [];
    for (let d = 0; d < owners.length; d++)
      definitions.push(await prisma.moduleDefinition.create({ data: { organizationId: owners[d], name: `module-${d}` } }));
    // One busy definition; the rest share the remainder, between about half and one and a half times the mean.
    const rest = TOTAL_VERSIONS - BUSY_DEFINITION_VERSIONS;
    const mean = rest / (definitions.length - 1);
    const counts = definitions.map((_, d) => (d === 0 ? BUSY_DEFINITION_VERSIONS : Math.round(mean * (0.5 + ((d * 37) % 100) / 100))));
    counts[counts.length - 1] += TOTAL_VERSIONS - counts.reduce((s, c) => s + c, 0);
    let batch: Prisma.ModuleVersionCreateManyInput[] = [];
    let written = 0;
    const flush = async () => {
      await prisma.moduleVersion.createMany({ data: batch });
      written += batch.length;
      batch = [];
      process.stdout.write(`\r› seeding: ${written} / ${TOTAL_VERSIONS} module versions`);
    };
    for (let d = 0; d < definitions.length; d++) {
      for (let i = 0; i < counts[d]; i++) {
        const version = versionAt(i);
        const parsed = parseVersion(version);
        if (!parsed.ok) throw new Error(`${version}: ${parsed.reason}`);
        batch.push({
          moduleDefinitionId: definitions[d].id,
          organizationId: definitions[d].organizationId,
          version,
          description: `module-${d} ${version}`,
          config: { image: `registry/module-${d}:${version}`, replicas: i % 5, env: { LOG: 'info' } },
          createdById: ownerId,
          ...parsed.version.columns,
        });
        if (batch.length === 5_000) await flush();
      }
    }
    if (batch.length) await flush();
    process.stdout.write('\n');
    // As autovacuum leaves a settled catalogue: statistics and the visibility map (index-only scans).
    await prisma.$executeRawUnsafe('VACUUM ANALYZE');
    // 40 of the organization's definitions and 10 global ones.
    const fiftyDefinitions = [...definitions.slice(1, 41), ...definitions.slice(DEFINITIONS.own, DEFINITIONS.own + 10)].map((d) => d.id);
    return { token, organizationId: own.id, typicalDefinition: definitions[7].id, busyDefinition: definitions[0].id, fiftyDefinitions };
  } finally {
    await prisma.$disconnect();
  }
}

/** The cursor after `offset` rows of a list, walked over HTTP as a client would. */
async function cursorAfter(url: string, headers: Record<string, string>, offset: number): Promise<string> {
  let cursor: string | undefined;
  for (let read = 0; read < offset; read += 100) {
    const page = (await (await fetch(`${url}&limit=100${cursor ? `&cursor=${cursor}` : ''}`, { headers })).json()) as { meta: { nextCursor?: string } };
    cursor = page.meta.nextCursor;
    if (!cursor) throw new Error(`${url} has fewer than ${offset} rows`);
  }
  return cursor as string;
}

/** A process's CPU time (user + system) in ms, from /proc (Linux); undefined elsewhere. */
function cpuMs(pid: number | undefined): number | undefined {
  const file = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(file)) return undefined;
  let stat: string;
  try {
    stat = readFileSync(file, 'utf8');
  } catch {
    return undefined; // the process ended meanwhile
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime, in clock ticks (100 per second on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * CPU time (ms) of every local Postgres process by pid (Linux; empty elsewhere or for a remote
 * server): a run's Postgres CPU is the sum of the differences, a backend new to the run counting
 * from 0. The pool's connections live through a run, so no backend's time is lost to its exit.
 */
function postgresCpu(): Map<number, number> {
  const cpu = new Map<number, number>();
  if (!existsSync('/proc')) return cpu;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let comm: string;
    try {
      comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm !== 'postgres') continue;
    const ms = cpuMs(Number(entry));
    if (ms !== undefined) cpu.set(Number(entry), ms);
  }
  return cpu;
}

function postgresCpuSince(before: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of postgresCpu()) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

async function explain(databaseUrl: string, queries: { name: string; sql: Prisma.Sql }[]): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const { name, sql } of queries) {
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql.text}`, sql.values as unknown[]);
      process.stdout.write(`\n-- ${name}\n${rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')}\n`);
    }
  } finally {
    await client.end();
  }
}

runOrExplain(async () => {
  const services = await provideServices();
  const apis: ChildProcess[] = [];
  try {
    const databaseUrl = await ensureDatabase(services.postgresServerUrl, DATABASE, { fresh: true });
    await migrate(databaseUrl);
    const seeded = await seed(databaseUrl);
    buildIfStale();
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: services.redisUrl,
      PORT: String(API_PORT),
      QUEUE_PREFIX: process.env.QUEUE_PREFIX ?? 'dpa-bench-mv',
      ...productionEnv(),
      RATE_LIMIT_PER_PRINCIPAL: '10000000',
    };
    // Two APIs side by side on the same data: statements unnamed (parsed and planned on every
    // request, as before DATABASE_PREPARED_STATEMENTS) and named (prepared once per connection).
    const compareRoot = process.env.BENCH_COMPARE_DIST;
    const variants = [
      { label: 'unnamed statements', port: API_PORT, env: { DATABASE_PREPARED_STATEMENTS: 'false' }, root: ROOT },
      { label: 'prepared statements', port: API_PORT + 1, env: { DATABASE_PREPARED_STATEMENTS: 'true' }, root: ROOT },
      ...(compareRoot
        ? [
            { label: `compare, unnamed: ${compareRoot}`, port: API_PORT + 2, env: { DATABASE_PREPARED_STATEMENTS: 'false' }, root: compareRoot },
            { label: `compare, prepared: ${compareRoot}`, port: API_PORT + 3, env: { DATABASE_PREPARED_STATEMENTS: 'true' }, root: compareRoot },
          ]
        : []),
    ].filter((v) => !process.env.BENCH_VARIANT || v.label.startsWith(process.env.BENCH_VARIANT));
    const pids = new Map<string, number | undefined>();
    const headers = { Authorization: `Bearer ${seeded.token}` };
    for (const variant of variants) {
      const api = spawn(process.execPath, ['dist/main.js'], {
        cwd: variant.root,
        env: { ...env, ...variant.env, PORT: String(variant.port) },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      apis.push(api);
      pids.set(variant.label, api.pid);
      await waitForOk(`http://127.0.0.1:${variant.port}/projects`, headers);
    }
    const minVersion = '0.5.0';
    const first = `http://127.0.0.1:${variants[0].port}`;
    const deepCursor = await cursorAfter(`${first}/module-versions/summaries?moduleDefinitionId=${seeded.busyDefinition}`, headers, DEEP_OFFSET);
    const paths: { name: string; path: string }[] = [
      { name: 'GET /projects (baseline)', path: '/projects' },
      {
        name: 'summaries?moduleDefinitionId&minVersion',
        path: `/module-versions/summaries?moduleDefinitionId=${seeded.typicalDefinition}&minVersion=${minVersion}`,
      },
      {
        // The busy definition from the same bound: its total is about 6,000 versions.
        name: 'summaries?moduleDefinitionId&minVersion (busy)',
        path: `/module-versions/summaries?moduleDefinitionId=${seeded.busyDefinition}&minVersion=${minVersion}`,
      },
      { name: 'summaries?moduleDefinitionIds (50 ids)', path: `/module-versions/summaries?moduleDefinitionIds=${seeded.fiftyDefinitions.join(',')}` },
      {
        name: `summaries deep page (cursor after ${DEEP_OFFSET} rows)`,
        path: `/module-versions/summaries?moduleDefinitionId=${seeded.busyDefinition}&cursor=${deepCursor}`,
      },
      { name: 'GET /module-versions (with config, 50 ids)', path: `/module-versions?moduleDefinitionIds=${seeded.fiftyDefinitions.join(',')}` },
      { name: 'summaries, every visible version (no filter)', path: '/module-versions/summaries' },
    ];
    const url = (port: number, path: string) => `http://127.0.0.1:${port}${path}`;
    for (const target of paths) {
      const response = await fetch(url(variants[0].port, target.path), { headers });
      const text = await response.text();
      const body = JSON.parse(text) as { data: unknown[]; meta: { totalCount: number } };
      if (!response.ok || body.data.length === 0) throw new Error(`${target.name} answered ${response.status} with ${body.data?.length} rows`);
      // Every API must answer the same bytes (the compared build included).
      for (const variant of variants.slice(1)) {
        const other = await (await fetch(url(variant.port, target.path), { headers })).text();
        if (other !== text) throw new Error(`${target.name}: ${variant.label} answers other bytes than ${variants[0].label}`);
      }
      process.stdout.write(`› ${target.name}: ${body.data.length} rows of ${body.meta.totalCount}, ${text.length} bytes, the same from every API\n`);
    }
    process.stdout.write(`› warming up ${WARMUP_S}s each…\n`);
    for (const variant of variants) for (const target of paths) await drive(url(variant.port, target.path), headers, WARMUP_S);
    type Run = Measurement & { cpuPerRequest?: number; postgresPerRequest?: number; driverPerRequest?: number };
    const results = new Map<string, Run[]>(variants.flatMap((v) => paths.map((t) => [`${v.label}|${t.name}`, []] as [string, Run[]])));
    for (let round = 1; round <= ROUNDS; round++) {
      // Interleaved: each request is measured on both APIs one after the other, so a change of the
      // machine's load touches both variants alike.
      for (const target of paths) {
        for (const variant of variants) {
          process.stdout.write(`› round ${round}/${ROUNDS}: ${variant.label}: ${target.name}, ${CONNECTIONS} connections, ${DURATION_S}s…\n`);
          const cpuBefore = cpuMs(pids.get(variant.label));
          const [postgresBefore, driverBefore] = [postgresCpu(), process.cpuUsage()];
          const measured = await drive(url(variant.port, target.path), headers, DURATION_S);
          const driver = process.cpuUsage(driverBefore);
          const postgresPerRequest = postgresBefore.size ? postgresCpuSince(postgresBefore) / measured.requests : undefined;
          const cpuAfter = cpuMs(pids.get(variant.label));
          const cpuPerRequest = cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / measured.requests;
          const driverPerRequest = (driver.user + driver.system) / 1000 / measured.requests;
          results.get(`${variant.label}|${target.name}`)!.push({ ...measured, cpuPerRequest, postgresPerRequest, driverPerRequest });
        }
      }
    }
    const mean = (list: Run[], key: 'rps' | 'p99' | 'load' | 'cpuPerRequest' | 'postgresPerRequest' | 'driverPerRequest') =>
      list.reduce((s, m) => s + (m[key] ?? NaN), 0) / list.length;
    for (const variant of variants) {
      const baseline = results.get(`${variant.label}|${paths[0].name}`)!;
      const [baseRps, baseCpu] = [mean(baseline, 'rps'), mean(baseline, 'cpuPerRequest')];
      process.stdout.write(
        `\n${variant.label} (DATABASE_PREPARED_STATEMENTS=${variant.env.DATABASE_PREPARED_STATEMENTS})\n| request | req/s per run | mean req/s | mean p99 (ms) | vs projects | API CPU per request (ms) | projects' CPU / this | Postgres CPU per request (ms) | driver CPU per request (ms) | mean load | non-2xx |\n|---|---|---|---|---|---|---|---|---|---|---|\n`,
      );
      const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(2));
      for (const target of paths) {
        const runs = results.get(`${variant.label}|${target.name}`)!;
        const [rps, cpu] = [mean(runs, 'rps'), mean(runs, 'cpuPerRequest')];
        process.stdout.write(
          `| ${target.name} | ${runs.map((m) => m.rps.toFixed(0)).join(' / ')} | ${rps.toFixed(0)} | ${mean(runs, 'p99').toFixed(1)} | ${((rps / baseRps) * 100).toFixed(0)}% | ${ms(cpu)} | ${Number.isNaN(cpu) ? '-' : `${((baseCpu / cpu) * 100).toFixed(0)}%`} | ${ms(mean(runs, 'postgresPerRequest'))} | ${ms(mean(runs, 'driverPerRequest'))} | ${mean(runs, 'load').toFixed(1)} | ${runs.reduce((s, m) => s + m.non2xx, 0)} |\n`,
        );
      }
    }
    process.stdout.write(
      "\nTargets (issue 22): every module-version request at least 50% of the projects list's req/s, the single-definition summaries at least 80%.\n",
    );
    const failed = [...results.values()].flat().reduce((s, m) => s + m.non2xx, 0);
    if (failed > 0) throw new Error(`${failed} responses were not 2xx: the figures above measure errors, not the lists`);

    // The exact SQL the API runs for each request (from the repository), explained on the seeded data.
    const repository = new ModuleVersionsRepository(undefined as unknown as PrismaService);
    const organizationId = seeded.organizationId;
    const minColumns = (parseVersion(minVersion) as { ok: true; version: { columns: VersionListFilter['minVersion'] } }).version.columns;
    const byMin: VersionListFilter = { organizationId, definitionIds: [seeded.typicalDefinition], minVersion: minColumns, releasesOnly: false };
    const fifty: VersionListFilter = { organizationId, definitionIds: seeded.fiftyDefinitions, releasesOnly: false };
    const busy: VersionListFilter = { organizationId, definitionIds: [seeded.busyDefinition], releasesOnly: false };
    const deepAfter = MODULE_VERSION_SUMMARY_KEYSET.after(decodeCursor(MODULE_VERSION_SUMMARY_KEYSET as never, deepCursor)) as {
      below: [number, number, number, string, string];
    };
    // One statement per request: the count, the page's ids from the order indexes, the page rendered as JSON.
    await explain(databaseUrl, [
      { name: 'summaries?moduleDefinitionId&minVersion', sql: repository.pageSql(byMin, false, undefined, 20) },
      {
        name: 'summaries?moduleDefinitionId&minVersion (busy)',
        sql: repository.pageSql({ ...byMin, definitionIds: [seeded.busyDefinition] }, false, undefined, 20),
      },
      { name: 'summaries?moduleDefinitionIds (50)', sql: repository.pageSql(fifty, false, undefined, 20) },
      { name: `deep page after ${DEEP_OFFSET} rows`, sql: repository.pageSql(busy, false, deepAfter, 20) },
      { name: 'GET /module-versions (with config, 50 ids)', sql: repository.pageSql(fifty, true, undefined, 20) },
      {
        name: 'every visible version (no definition filter), page after the deep cursor',
        sql: repository.pageSql({ organizationId, releasesOnly: false }, false, deepAfter, 20),
      },
    ]);
  } finally {
    for (const api of apis) api.kill('SIGTERM');
    await services.stop();
  }
});
