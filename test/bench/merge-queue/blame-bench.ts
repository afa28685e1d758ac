/*
 * npx tsx test/bench/merge-queue/blame-bench.ts [--seeds 1,2,3 --rates 30 --bad 0.03,0.08 --prs 1500]
 *
 * Blame rounds of issue 40 (docs/research/merge-queue-issue-40.md, "Blame"): main's fixed flaky
 * budget (`flakyRetries: 1`) against the posterior rule (the default), with pass/fail CI only and
 * with CI that names the failing tests (the scenario's `reportsTests`: entries carry their lanes,
 * failures their tests). Prints throughput / X*, good PRs wrongly failed, bad PRs landed, the most
 * failing runs any one PR sat in, and CI runs per merged PR, averaged (or summed, or maxed) over
 * the seeds. Tuning seeds are 1-3; held-out figures are for the lead's round on seeds 4-9.
 */
import type { PlannerConfig } from '@/modules/merge-queues/planner';
import { simulate } from './simulator';
import type { Scenario, World } from './world';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const PRS = Number(arg('prs') ?? 1500);
const SEEDS = (arg('seeds') ?? '1,2,3').split(',').map(Number);
const RATES = (arg('rates') ?? '30').split(',').map(Number);
const BAD = (arg('bad') ?? '0.03,0.08').split(',').map(Number);
const FLAKE = Number(arg('flake') ?? 0.02);
const RUNNERS = Number(arg('runners') ?? 4);

const ALL_VARIANTS: { name: string; config: Partial<PlannerConfig>; reportsTests: boolean }[] = [
  { name: 'main rule (flakyRetries 1), pass/fail', config: { flakyRetries: 1 }, reportsTests: false },
  { name: 'posterior, pass/fail', config: {}, reportsTests: false },
  { name: 'main rule (flakyRetries 1), failing tests', config: { flakyRetries: 1 }, reportsTests: true },
  { name: 'posterior, failing tests', config: {}, reportsTests: true },
];
/** `--variants 0,2`: only these (indexes into the list above). */
const VARIANTS = arg('variants')
  ? arg('variants')!
      .split(',')
      .map((i) => ALL_VARIANTS[Number(i)])
  : ALL_VARIANTS;

/** The most failing CI runs (finished, not cancelled) any one PR sat in. */
function maxFailingRuns(world: World): number {
  const count = new Map<number, number>();
  for (const run of world.runs) {
    if (run.canceled || run.finishedAt === null || !run.fails) continue;
    for (const n of run.content) count.set(n, (count.get(n) ?? 0) + 1);
  }
  return Math.max(0, ...count.values());
}

function main(): void {
  console.log(`# Blame: ${PRS} PRs, ${RUNNERS} runners, f=${FLAKE}, seeds ${SEEDS.join(',')}`);
  console.log('| scenario | variant | throughput / X* | good failed | bad landed | max failing runs / PR | CI runs / merged | violations |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const rate of RATES) {
    for (const bad of BAD) {
      for (const v of VARIANTS) {
        const scenario: Scenario & { reportsTests?: boolean } = {
          name: `${rate}/h p=${bad * 100}%`,
          ratePerHour: rate,
          badRate: bad,
          flakeRate: FLAKE,
          prs: PRS,
          conflictRate: 0.004,
          orderConflictRate: 0.01,
          slowRate: 0.1,
          runners: RUNNERS,
          crashRate: 0,
          reportsTests: v.reportsTests,
        };
        const runs = SEEDS.map((seed) => simulate(scenario, seed, 'ours', { recordRuns: true, config: v.config }));
        const mean = (f: (m: (typeof runs)[number]) => number) => runs.reduce((s, r) => s + f(r), 0) / runs.length;
        const sum = (f: (m: (typeof runs)[number]) => number) => runs.reduce((s, r) => s + f(r), 0);
        console.log(
          `| ${scenario.name} | ${v.name} | ${mean((r) => r.metrics.throughput).toFixed(3)} | ${sum((r) => r.metrics.goodFailed)} | ${sum((r) => r.metrics.badLanded)} | ${Math.max(...runs.map((r) => maxFailingRuns(r.world)))} | ${mean((r) => r.metrics.ciRunsPerMerged).toFixed(2)} | ${sum((r) => r.metrics.violations)} |`,
        );
      }
    }
  }
}

main();
