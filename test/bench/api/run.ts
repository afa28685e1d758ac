/**
 * `npm run bench:api`: the full stack (built API: auth, scoping, validation, envelope, logging,
 * Prisma) against a plain NestJS + Prisma server as many teams ship it (plain-server.ts) and a bare
 * node:http + pg server (bare-server.cjs), all answering the same page of the same query.
 * Seeds 10,000 projects over 10 organizations, then drives the three with autocannon (50
 * connections, 10 s after a warm-up), alternating, three rounds, and prints req/s, p99 and ratios.
 * BENCH_CPU_PROFILE=<dir> instead profiles each server under the same load (boot and warm-up
 * excluded) and prints where its CPU time went (cpu-profile-summary.ts); its req/s carry the
 * profiler's overhead and are not comparable with a plain run.
 * Environment: BENCH_DURATION_S (10), BENCH_ROUNDS (3), BENCH_CPU_PROFILE, BENCH_PORT (3901: the
 * four servers listen on it and the next three ports), BENCH_DATABASE (delivery_platform_bench:
 * dropped and re-created), BENCH_COMPARE_DIST (a checkout of another commit, built: its full stack,
 * everything on, takes the place of the one with the levers off, for a before/after in one run).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { migrate } from '@/common/prisma/migration-runner';
import { PrismaClient } from '@/generated/prisma/client';
import { buildIfStale } from '@tools/workspace/build';
import { createBenchOwnerKey } from '../support';
import { CONNECTIONS, drive, productionEnv, waitForOk, type Measurement } from '../http-drive';
import { ensureDatabase } from '@tools/workspace/databases';
import { ROOT } from '@tools/workspace/root';
import { provideServices, runOrExplain } from '@tools/workspace/services';
import { summariseProfile } from './cpu-profile-summary';

const ORGANIZATIONS = 10;
const PROJECTS_PER_ORGANIZATION = 1_000;
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const WARMUP_S = 3;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PROFILE_DIR = process.env.BENCH_CPU_PROFILE;
const PORT = Number(process.env.BENCH_PORT ?? 3901);
const COMPARE_ROOT = process.env.BENCH_COMPARE_DIST;
const DATABASE = process.env.BENCH_DATABASE ?? 'delivery_platform_bench';

const SERVERS = {
  api: { label: 'full stack (NestJS + Prisma, everything on)', port: PORT },
  // The same build with this round's two levers off, measured beside it (issue 22).
  before: {
    label: COMPARE_ROOT ? `full stack of ${COMPARE_ROOT} (everything on)` : 'full stack, statements unnamed and every hit counted in Redis',
    port: PORT + 3,
  },
  plain: { label: 'plain NestJS + Prisma (findMany + count)', port: PORT + 2 },
  bare: { label: 'bare node:http + pg', port: PORT + 1 },
} as const;
type ServerName = keyof typeof SERVERS;
const NAMES = Object.keys(SERVERS) as ServerName[];

async function seed(databaseUrl: string): Promise<{ organizationId: string; token: string }> {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  try {
    let first: { organizationId: string; token: string } | undefined;
    for (let o = 0; o < ORGANIZATIONS; o++) {
      const organization = await prisma.organization.create({ data: { name: `bench-${o}` } });
      const { token } = await createBenchOwnerKey(prisma, organization.id);
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

function startProcess(name: ServerName, args: string[], env: NodeJS.ProcessEnv, cwd = ROOT): ChildProcess {
  const profiling = PROFILE_DIR ? ['--require', join(__dirname, 'cpu-profile-preload.cjs')] : [];
  const child = spawn(process.execPath, [...profiling, ...args], {
    cwd,
    env: { ...env, CPU_PROFILE_FILE: profileFile(name) },
    stdio: PROFILE_DIR ? ['ignore', 'ignore', 'inherit', 'ipc'] : ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', (code, signal) => {
    if (!stopping.has(child)) process.stderr.write(`the ${name} server exited early (${signal ?? code})\n`);
  });
  return child;
}

const stopping = new WeakSet<ChildProcess>();
const profileFile = (name: ServerName) => join(PROFILE_DIR ?? '', `${name}.cpuprofile`);

/** Stops a server; a profiled one writes its profile first. */
function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    stopping.add(child);
    child.once('exit', () => done());
    if (child.connected) child.send('stop-profile');
    else child.kill('SIGTERM');
  });
}

runOrExplain(async () => {
  const services = await provideServices();
  const processes = new Map<ServerName, ChildProcess>();
  try {
    const databaseUrl = await ensureDatabase(services.postgresServerUrl, DATABASE, { fresh: true });
    await migrate(databaseUrl);
    const { organizationId, token } = await seed(databaseUrl);
    buildIfStale();
    if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
    // The per-key rate limit is counted in Redis on every request as in production; its budget is
    // raised so that the bench measures the counting, not 429s.
    const env = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      REDIS_URL: services.redisUrl,
      PORT: String(SERVERS.api.port),
      ...productionEnv(),
      RATE_LIMIT_PER_PRINCIPAL: '10000000',
    };
    processes.set('api', startProcess('api', ['dist/main.js'], env));
    processes.set(
      'before',
      COMPARE_ROOT
        ? startProcess('before', ['dist/main.js'], { ...env, PORT: String(SERVERS.before.port) }, COMPARE_ROOT)
        : startProcess('before', ['dist/main.js'], {
            ...env,
            PORT: String(SERVERS.before.port),
            DATABASE_PREPARED_STATEMENTS: 'false',
            RATE_LIMIT_LOCAL_PRE_COUNT: 'false',
          }),
    );
    // tsconfig.json covers src/ only; the check config also covers test/ (decorators, paths).
    const plainEnv = { ...env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.check.json') };
    processes.set(
      'plain',
      startProcess('plain', ['--import', 'tsx', join(__dirname, 'plain-server.ts'), String(SERVERS.plain.port), databaseUrl, organizationId], plainEnv),
    );
    processes.set('bare', startProcess('bare', [join(__dirname, 'bare-server.cjs'), String(SERVERS.bare.port), databaseUrl, organizationId], env));
    const auth = { Authorization: `Bearer ${token}` };
    const targets = Object.fromEntries(
      NAMES.map((name) => [name, { url: `http://127.0.0.1:${SERVERS[name].port}/projects`, headers: name === 'api' || name === 'before' ? auth : {} }]),
    ) as Record<ServerName, { url: string; headers: Record<string, string> }>;
    for (const name of NAMES) await waitForOk(targets[name].url, targets[name].headers);
    const bodies = await Promise.all(NAMES.map((name) => fetch(targets[name].url, { headers: targets[name].headers }).then((r) => r.text())));
    for (const [i, body] of bodies.entries()) {
      if (body === bodies[0]) continue;
      let at = 0;
      while (body[at] === bodies[0][at]) at++;
      throw new Error(
        `${NAMES[i]} and ${NAMES[0]} do not answer the same page byte for byte (from character ${at}: …${body.slice(at, at + 60)}… against …${bodies[0].slice(at, at + 60)}…); the comparison would be meaningless`,
      );
    }
    const totalCount = (JSON.parse(bodies[0]) as { meta: { totalCount: number } }).meta.totalCount;
    process.stdout.write(`› the ${NAMES.length} servers answer the same page, byte for byte (20 of ${totalCount} projects); warming up ${WARMUP_S}s each…\n`);
    for (const name of NAMES) await drive(targets[name].url, targets[name].headers, WARMUP_S);

    if (PROFILE_DIR) {
      for (const name of NAMES) {
        const child = processes.get(name) as ChildProcess;
        child.send('start-profile');
        process.stdout.write(`› profiling ${name}, ${CONNECTIONS} connections, ${DURATION_S}s…\n`);
        const measured = await drive(targets[name].url, targets[name].headers, DURATION_S);
        await stop(child);
        process.stdout.write(
          `\n## ${SERVERS[name].label}: ${measured.rps.toFixed(0)} req/s under the profiler, p99 ${measured.p99} ms (${profileFile(name)})\n`,
        );
        process.stdout.write(`${summariseProfile(JSON.parse(readFileSync(profileFile(name), 'utf8')), measured.requests)}\n\n`);
      }
      return;
    }

    const results: Record<ServerName, Measurement[]> = { api: [], before: [], plain: [], bare: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const name of NAMES) {
        process.stdout.write(`› round ${round}/${ROUNDS}: ${name}, ${CONNECTIONS} connections, ${DURATION_S}s…\n`);
        results[name].push(await drive(targets[name].url, targets[name].headers, DURATION_S));
      }
    }
    const mean = (list: Measurement[], key: keyof Measurement) => list.reduce((s, m) => s + m[key], 0) / list.length;
    const rps = Object.fromEntries(NAMES.map((name) => [name, mean(results[name], 'rps')])) as Record<ServerName, number>;
    process.stdout.write(`\n${CONNECTIONS} connections, ${DURATION_S} s per run, ${ROUNDS} rounds alternating ${NAMES.join(', ')}; ${cpus().length} cores\n`);
    process.stdout.write('\n| server | req/s per run | mean req/s | mean p99 (ms) | non-2xx | load avg per run |\n|---|---|---|---|---|---|\n');
    for (const name of NAMES) {
      const runs = results[name].map((m) => m.rps.toFixed(0)).join(' / ');
      const errors = results[name].reduce((s, m) => s + m.non2xx, 0);
      const loads = results[name].map((m) => m.load.toFixed(1)).join(' / ');
      process.stdout.write(
        `| ${SERVERS[name].label} | ${runs} | ${rps[name].toFixed(0)} | ${mean(results[name], 'p99').toFixed(1)} | ${errors} | ${loads} |\n`,
      );
    }
    const ratio = (a: ServerName, b: ServerName) => `${((rps[a] / rps[b]) * 100).toFixed(1)}%`;
    const failed = NAMES.reduce((sum, name) => sum + results[name].reduce((s, m) => s + m.non2xx, 0), 0);
    if (failed > 0) throw new Error(`${failed} responses were not 2xx: the figures above measure errors, not the list`);
    process.stdout.write(
      `\nfull stack / bare  = ${ratio('api', 'bare')}\nplain / bare       = ${ratio('plain', 'bare')}\nfull stack / plain = ${ratio('api', 'plain')} (issue 22 target: >= 100%)\np99, full stack vs plain = ${mean(results.api, 'p99').toFixed(1)} vs ${mean(results.plain, 'p99').toFixed(1)} ms (issue 22 target: no worse than plain)\n${COMPARE_ROOT ? 'compared build' : 'without the levers'} / plain = ${ratio('before', 'plain')}; p99 ${mean(results.before, 'p99').toFixed(1)} ms\n`,
    );
  } finally {
    await Promise.all([...processes.values()].map(stop));
    await services.stop();
  }
});
