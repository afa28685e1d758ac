/*
 * npx tsx test/bench/merge-queue/cells.ts --cells "30:0.03:4:0:ours,30:0.08:6:0:github" [--seeds 4,5,6,7,8,9 --prs 1500]
 *
 * The cells of bench:merge-queue's tier table one line each, as each finishes, so that a table can
 * be computed by several processes side by side (a cell: rate:p:runners:phi:policy, phi 0 = pass/fail
 * CI, else failing tests reported and fail first at that fraction; f=2%, issue 40's model). Ours
 * runs with maxParallel equal to the runners, as in run.ts.
 */
import { type PolicyName, simulate } from './simulator';
import type { Scenario } from './world';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seeds = (arg('seeds') ?? '4,5,6,7,8,9').split(',').map(Number);
const prs = Number(arg('prs') ?? 1500);
for (const cell of (arg('cells') ?? '').split(',').filter(Boolean)) {
  const [rate, bad, runners, phi, policy] = cell.split(':');
  const tests = Number(phi) > 0 && policy === 'ours';
  const sc: Scenario = {
    name: cell,
    ratePerHour: Number(rate),
    badRate: Number(bad),
    flakeRate: 0.02,
    prs,
    conflictRate: 0.004,
    orderConflictRate: 0.01,
    slowRate: 0.1,
    runners: Number(runners),
    crashRate: 0,
    reportsTests: tests,
    ...(tests ? { failFirstFraction: Number(phi) } : {}),
  };
  const started = performance.now();
  const config = policy === 'ours' ? { maxParallel: Number(runners) } : undefined;
  const runs = seeds.map((seed) => simulate(sc, seed, policy as PolicyName, { config }).metrics);
  const mean = (f: (m: (typeof runs)[number]) => number) => runs.reduce((s, m) => s + f(m), 0) / runs.length;
  const sum = (f: (m: (typeof runs)[number]) => number) => runs.reduce((s, m) => s + f(m), 0);
  console.log(
    JSON.stringify({
      cell,
      seeds: seeds.join(','),
      prs,
      throughput: +mean((m) => m.throughput).toFixed(3),
      // Each seed's figure, in the order of --seeds: how far apart two cells are against the spread of seeds.
      perSeed: runs.map((m) => +m.throughput.toFixed(3)),
      goodFailed: sum((m) => m.goodFailed),
      goodFailedPer1000: +((sum((m) => m.goodFailed) / (runs.length * prs)) * 1000).toFixed(2),
      maxFailingRuns: Math.max(...runs.map((m) => m.maxFailingRuns)),
      badLanded: sum((m) => m.badLanded),
      violations: sum((m) => m.violations),
      p90: +mean((m) => m.p90Hours).toFixed(2),
      ciPerMerged: +mean((m) => m.ciRunsPerMerged).toFixed(2),
      seconds: +((performance.now() - started) / 1000).toFixed(0),
    }),
  );
}
