/**
 * `npm run bench:api`: the full stack (built API: auth, scoping, validation, envelope, logging,
 * Prisma) against a bare node:http + pg server answering the same page of the same query.
 * Seeds 10,000 projects over 10 organizations, then drives both with autocannon (50 connections,
 * 10 s after a warm-up), alternating, twice each, and prints req/s, p99 and the ratio.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { PrismaPg } from '@prisma/adapter-pg';
import { migrate } from '@/common/prisma/migration-runner';
import { PrismaClient } from '@/generated/prisma/client';
import { hashToken } from '@/common/auth/api-key-hash';
import { apiKeyTokenSuffix, encodeApiKeyToken } from '@/common/auth/api-key-token';
import { randomBytes } from 'node:crypto';
import { buildIfStale } from '../../../src/ops/build';
import { ensureDatabase, provideServices, ROOT, runOrExplain } from '../../../src/ops/services';

const ORGANIZATIONS = 10;
const PROJECTS_PER_ORGANIZATION = 1_000;
const CONNECTIONS = 50;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 3;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const API_PORT = 3901;
const BARE_PORT = 3902;

async function seed(databaseUrl: string): Promise<{ organizationId: string; token: string }> {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  try {
    let first: { organizationId: string; token: string } | undefined;
    for (let o = 0; o < ORGANIZATIONS; o++) {
      const organization = await prisma.organization.create({ data: { name: `bench-${o}` } });
      const owner = await prisma.member.create({ data: { organizationId: organization.id, name: 'bench owner', role: 'OWNER' } });
      const token = encodeApiKeyToken(randomBytes(32));
      await prisma.apiKey.create({ data: { organizationId: organization.id, name: 'bench', ownerId: owner.id, ownerType: 'MEMBERSHIP', createdById: owner.id, tokenHash: hashToken(token), keySuffix: apiKeyTokenSuffix(token) } });
      const base = Date.now() - PROJECTS_PER_ORGANIZATION * 1000;
      await prisma.project.createMany({
        data: Array.from({ length: PROJECTS_PER_ORGANIZATION }, (_, i) => ({
          organizationId: organization.id,
          givenId: `project-${i}`,
          name: `Project ${i}`,
          description: i % 3 === 0 ? `Description of project ${i}` : null,
          createdAt: new Date(base + i * 1000),
        })),
      });
      first ??= { organizationId: organization.id, token };
      process.stdout.write(`\r› seeding: ${(o + 1) * PROJECTS_PER_ORGANIZATION} / ${ORGANIZATIONS * PROJECTS_PER_ORGANIZATION} projects`);
    }
    process.stdout.write('\n');
    return first as { organizationId: string; token: string };
  } finally {
    await prisma.$disconnect();
  }
}

function startProcess(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function waitForOk(url: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url, { headers })).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}

interface Measurement {
  rps: number;
  p99: number;
  non2xx: number;
}

async function drive(url: string, headers: Record<string, string>, durationS: number): Promise<Measurement> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: durationS, headers });
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx + result.errors };
}

runOrExplain(async () => {
  const services = await provideServices();
  const processes: ChildProcess[] = [];
  try {
    const databaseUrl = await ensureDatabase(services.postgresServerUrl, 'delivery_platform_bench', { fresh: true });
    await migrate(databaseUrl);
    const { organizationId, token } = await seed(databaseUrl);
    buildIfStale();
    const env = { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: services.redisUrl, PORT: String(API_PORT), NODE_ENV: 'production' };
    processes.push(startProcess(['dist/main.js'], env));
    processes.push(startProcess([join(__dirname, 'bare-server.cjs'), String(BARE_PORT), databaseUrl, organizationId], env));
    const auth = { Authorization: `Bearer ${token}` };
    const targets = {
      api: { url: `http://127.0.0.1:${API_PORT}/projects`, headers: auth },
      bare: { url: `http://127.0.0.1:${BARE_PORT}/projects`, headers: {} },
    };
    await waitForOk(targets.api.url, auth);
    await waitForOk(targets.bare.url);
    const [apiBody, bareBody] = (await Promise.all([fetch(targets.api.url, { headers: auth }).then((r) => r.json()), fetch(targets.bare.url).then((r) => r.json())])) as { meta: { totalCount: number } }[];
    if (JSON.stringify(apiBody) !== JSON.stringify(bareBody)) throw new Error('the two servers do not answer the same page; the comparison would be meaningless');
    process.stdout.write(`› both servers answer the same page (20 of ${apiBody.meta.totalCount} projects); warming up ${WARMUP_S}s each…\n`);
    await drive(targets.api.url, targets.api.headers, WARMUP_S);
    await drive(targets.bare.url, targets.bare.headers, WARMUP_S);
    const results: Record<'api' | 'bare', Measurement[]> = { api: [], bare: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const name of ['api', 'bare'] as const) {
        process.stdout.write(`› round ${round}/${ROUNDS}: ${name}, ${CONNECTIONS} connections, ${DURATION_S}s…\n`);
        results[name].push(await drive(targets[name].url, targets[name].headers, DURATION_S));
      }
    }
    const mean = (list: Measurement[], key: keyof Measurement) => list.reduce((s, m) => s + m[key], 0) / list.length;
    const rows = (['api', 'bare'] as const).map((name) => ({
      server: name === 'api' ? 'full stack (NestJS + Prisma)' : 'bare node:http + pg',
      runs: results[name].map((m) => m.rps.toFixed(0)).join(' / '),
      rps: mean(results[name], 'rps'),
      p99: mean(results[name], 'p99'),
      errors: results[name].reduce((s, m) => s + m.non2xx, 0),
    }));
    process.stdout.write('\n| server | req/s per run | mean req/s | mean p99 (ms) | non-2xx |\n|---|---|---|---|---|\n');
    for (const row of rows) process.stdout.write(`| ${row.server} | ${row.runs} | ${row.rps.toFixed(0)} | ${row.p99.toFixed(1)} | ${row.errors} |\n`);
    process.stdout.write(`\nfull stack / bare = ${((rows[0].rps / rows[1].rps) * 100).toFixed(1)}% of req/s (target >= 50%)\n`);
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    await services.stop();
  }
});
