/*
 * npx tsx test/bench/merge-queue/bound.ts [-- --rate 30 --bad 0.03,0.08 --flake 0.02 --seeds 1,2,3 --prs 1500
 *   --batches 2,4,6,8,12,16,24 --depths 1,2,3,4,6,8 --runners 4 --slow 0.1 --search-run 1 --policy group --eager 1]
 *
 * How far one chain can go on the simulator's model when culprits cost nothing: OracleChainPolicy
 * (oracle-policy.ts) for each batch size and depth, mean throughput / X* over the seeds, side by
 * side with the real planner (`ours`, main's defaults) on the same worlds. Prints one table per bad
 * rate (rows: batch size, columns: depth) and the best cell. `--search-run` names the culprits only
 * after one run of the failed batch on the base (the least a search the chain waits for costs); `--charged 1` only
 * after the search is charged one CI run per bit (bounds.ts; bounds-sweep.ts sweeps it on held-out seeds); `--policy group`
 * measures a real rule instead, one round of group tests (group-test-policy.ts; `--eager` starts
 * them as soon as a batch is the head).
 */
import { GroupTestChainPolicy } from './group-test-policy';
import { OracleChainPolicy } from './oracle-policy';
import { simulate } from './simulator';
import type { Scenario } from './world';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const list = (text: string) => text.split(',').map(Number);

const rate = Number(arg('rate', '30'));
const seeds = list(arg('seeds', '1,2,3'));
const batches = list(arg('batches', '2,4,6,8,12,16,24'));
const depths = list(arg('depths', '1,2,3,4,6,8'));
const kind = arg('policy', 'oracle');
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

for (const bad of list(arg('bad', '0.03,0.08'))) {
  const scenario: Scenario = {
    name: 'bound',
    ratePerHour: rate,
    badRate: bad,
    flakeRate: Number(arg('flake', '0.02')),
    prs: Number(arg('prs', '1500')),
    conflictRate: 0.004,
    orderConflictRate: 0.01,
    slowRate: Number(arg('slow', '0.1')),
    runners: Number(arg('runners', '4')),
    crashRate: 0,
    misattribution: Number(arg('misattribution', '0.25')),
    testAreas: Number(arg('test-areas', '8')),
  };
  const header = `${rate}/h p=${(bad * 100).toFixed(0)}% f=${(scenario.flakeRate * 100).toFixed(0)}%, ${scenario.runners} runners, ${(scenario.slowRate * 100).toFixed(0)}% slow PRs x3, seeds ${seeds.join(',')}, ${scenario.prs} PRs`;
  process.stdout.write(
    `\n## ${header}: throughput / X*, one chain, ${kind === 'attributed' ? `suspects named by the failing test areas (${scenario.testAreas} areas, misattribution ${scenario.misattribution}), tested alone` : kind === 'group' ? 'culprits found by one round of group tests' : arg('charged', '') ? 'culprits named once the search is charged one CI run per bit (the chain waits for it)' : arg('search-run', '') ? 'culprits named by one run of the failed batch on the base (the chain waits for it)' : 'culprits found for free'}\n\n`,
  );
  process.stdout.write(`| batch \\ depth | ${depths.join(' | ')} |\n|---|${depths.map(() => '---:').join('|')}|\n`);
  let best = { value: 0, batch: 0, depth: 0, goodFailed: 0 };
  let violations = 0;
  for (const batch of batches) {
    const cells: string[] = [];
    for (const depth of depths) {
      const runs = seeds.map(
        (seed) =>
          simulate(scenario, seed, 'ours', {
            policy: (world) =>
              kind === 'group' || kind === 'attributed'
                ? new GroupTestChainPolicy(world, batch, depth, arg('eager', '') !== '', kind === 'attributed', arg('no-retry', '') === '')
                : new OracleChainPolicy(world, batch, depth, arg('charged', '') !== '' ? 'charged' : arg('search-run', '') !== ''),
          }).metrics,
      );
      const value = mean(runs.map((m) => m.throughput));
      violations += runs.reduce((s, m) => s + m.violations + m.badLanded, 0);
      if (value > best.value) best = { value, batch, depth, goodFailed: runs.reduce((s, m) => s + m.goodFailed, 0) };
      cells.push(value.toFixed(3));
    }
    process.stdout.write(`| ${batch} | ${cells.join(' | ')} |\n`);
  }
  const ours = mean(seeds.map((seed) => simulate(scenario, seed, 'ours').metrics.throughput));
  process.stdout.write(
    `\nbest: ${best.value.toFixed(3)} (batch ${best.batch}, depth ${best.depth}; good PRs failed ${best.goodFailed} over the seeds); the real planner on the same worlds: ${ours.toFixed(3)}; ` +
      `invariant violations and bad PRs landed over every cell: ${violations}\n`,
  );
}
