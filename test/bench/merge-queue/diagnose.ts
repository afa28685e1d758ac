/*
 * npx tsx test/bench/merge-queue/diagnose.ts [-- --rate 15 --bad 0.03 --flake 0.02 --seeds 1,2,3 --prs 1500 --why 1 --oracle-heavy 1
 *   --roles 1 --slow 0.1 --runners 4 --lanes 4 --span 0.1]
 *
 * Where the time goes for ours: CI runner time by what became of each run (its candidate landed,
 * it passed but never landed, it failed, it was cancelled), idle runner time, and how long the
 * chain was held by a bisection (order rule) or had nothing live while PRs waited. `--roles` splits
 * the runs by role and outcome with how many were slow; `--slow` and `--runners` change the model
 * (controls); `--lanes` runs one planner per lane (the lanes upper bound, world.ts), and then the
 * bisection and chain figures are lane 0's and each lane's share of its good PRs is printed;
 * `--span` makes that share of PRs touch a second directory (PRs that span lanes, LanesPolicy).
 */
import type { LanesPolicy, PlannerPolicy } from './planner-policy';
import { simulate } from './simulator';
import { type CiRun, HOUR, laneOfDirectory, MINUTE, type Scenario, type World, zipfWeights } from './world';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const rate = Number(arg('rate') ?? 15);
const sc: Scenario = {
  name: 'diag',
  ratePerHour: rate,
  badRate: Number(arg('bad') ?? 0.03),
  flakeRate: Number(arg('flake') ?? 0.02),
  prs: Number(arg('prs') ?? 1500),
  conflictRate: 0.004,
  orderConflictRate: 0.01,
  slowRate: Number(arg('slow') ?? 0.1),
  runners: Number(arg('runners') ?? 4),
  crashRate: 0,
  lanes: Number(arg('lanes') ?? 0),
  spanRate: Number(arg('span') ?? 0),
};

if ((sc.lanes ?? 0) > 1) {
  const weights = zipfWeights(8);
  const laneOf = laneOfDirectory(weights, sc.lanes ?? 0);
  const load = laneOf.reduce<number[]>((acc, l, d) => ((acc[l] = (acc[l] ?? 0) + weights[d]), acc), []);
  console.log(
    `PR paths: each PR touches one of 8 top-level directories, drawn by Zipf(1) (${weights.map((w) => w.toFixed(3)).join(' ')}); ` +
      `${sc.lanes} lanes by weight (${load.map((w, l) => `lane ${l} ${w.toFixed(3)}`).join(', ')}); ` +
      (sc.spanRate
        ? `${(sc.spanRate * 100).toFixed(0)}% of PRs also touch a second directory (Zipf(1) over the other seven): those in two lanes span them, ` +
          'wait for every PR ahead of them in their lanes, are tested on the real base and land while their lanes wait; conflicts between PRs sharing a lane; '
        : 'no PR spans lanes (an upper bound for lanes); conflicts only within a lane; ') +
      'a lane lands onto a base other lanes moved with no new test',
  );
}

for (const seed of (arg('seeds') ?? '1,2,3').split(',').map(Number)) {
  const { metrics, world, policy } = simulate(sc, seed, 'ours', {
    recordRuns: true,
    config: JSON.parse(arg('config') ?? '{}'),
    oracleHeavy: arg('oracle-heavy') !== undefined,
    spanRule: arg('span-rule') === 'host' ? 'host' : 'barrier',
  });
  const end = world.lastArrival;
  const kinds = { landed: 0, passedUnused: 0, failed: 0, canceled: 0 };
  const count = { landed: 0, passedUnused: 0, failed: 0, canceled: 0 };
  const byRole = { chain: 0, probe: 0, screen: 0 };
  const d0 = policy as PlannerPolicy;
  const why: Record<string, { n: number; ms: number }> = {};
  for (const r of world.runs) {
    if (r.startedAt === null || r.startedAt > end) continue;
    const stop = Math.min(r.finishedAt ?? end, end);
    const ms = Math.max(0, stop - r.startedAt);
    const k = r.canceled ? 'canceled' : r.fails ? 'failed' : world.isLanded(r.sha) ? 'landed' : 'passedUnused';
    kinds[k] += ms;
    count[k] += 1;
    byRole[r.tag.startsWith('probe') ? 'probe' : r.tag.startsWith('screen') ? 'screen' : 'chain'] += 1;
    if (k === 'passedUnused' || k === 'canceled') {
      const id = /(b\d+) \[/.exec(r.tag)?.[1] ?? '?';
      const end = d0.batchEnd.get(id);
      const key = `${k} ${end?.role ?? '?'}: ${end?.end ?? 'still live'}`;
      why[key] = why[key] ?? { n: 0, ms: 0 };
      why[key].n += 1;
      why[key].ms += ms;
    }
  }
  const total = sc.runners * end;
  const busy = kinds.landed + kinds.passedUnused + kinds.failed + kinds.canceled;
  const pct = (x: number) => `${((100 * x) / total).toFixed(1)}%`;
  const d = (policy as PlannerPolicy).diag;
  console.log(
    `seed ${seed}: throughput ${metrics.throughput.toFixed(3)} merged ${metrics.merged} CI/merged ${metrics.ciRunsPerMerged.toFixed(2)}; ` +
      `runner time to last arrival: landed ${pct(kinds.landed)} (${count.landed} runs), passed-unused ${pct(kinds.passedUnused)} (${count.passedUnused}), ` +
      `failed ${pct(kinds.failed)} (${count.failed}), cancelled ${pct(kinds.canceled)} (${count.canceled}), idle ${pct(total - busy)} (bisection ${pct(d.idleBarrierMs)}, other ${pct(d.idleOtherMs)}, nothing queued ${pct(d.idleEmptyMs)}); ` +
      `runs chain ${byRole.chain} probe ${byRole.probe} screen ${byRole.screen}; ` +
      `invariant violations ${metrics.violations}, bad landed ${metrics.badLanded}, good failed ${metrics.goodFailed}; bisection in progress ${(d.barrierMs / HOUR).toFixed(1)} h, chain idle while PRs wait ${(d.chainIdleMs / HOUR).toFixed(1)} h of ${(end / HOUR).toFixed(1)} h`,
  );
  if (arg('roles') !== undefined) roleRuns(world, end);
  if ((sc.lanes ?? 0) > 1) laneShares(world, policy as unknown as LanesPolicy);
  if (arg('why') !== undefined) {
    screenRuns(world, end);
    breakdown('idle runner time outside a bisection, by why the chain did not grow:', d0.idleWhy, total, pct);
    breakdown('chain idle while PRs wait (hours), by why:', d0.chainIdleWhy, end, (x) => `${(x / HOUR).toFixed(1)} h`);
    console.log('  passed-unused and cancelled runs, by how their batch ended (runs, runner time):');
    for (const [k, v] of Object.entries(why).sort((a, b) => b[1].n - a[1].n)) console.log(`    ${String(v.n).padStart(3)} ${pct(v.ms)}  ${k}`);
  }
}

/** Runs started before the last arrival by role and outcome: count, runner hours, how many held a slow PR, mean unlanded PRs held. */
function roleRuns(world: World, end: number): void {
  const rows: Record<string, { n: number; h: number; slow: number; slowH: number; prs: number }> = {};
  for (const r of world.runs) {
    if (r.startedAt === null || r.startedAt > end) continue;
    const h = (Math.min(r.finishedAt ?? end, end) - r.startedAt) / HOUR;
    const role = r.tag.startsWith('probe') ? 'probe' : r.tag.startsWith('screen') ? 'screen' : 'chain';
    const k = `${role} ${r.canceled ? 'cancelled' : r.fails ? 'failed' : world.isLanded(r.sha) ? 'landed' : 'passed-unused'}`;
    const row = (rows[k] ??= { n: 0, h: 0, slow: 0, slowH: 0, prs: 0 });
    row.n += 1;
    row.h += h;
    row.prs += r.content.length;
    if (r.content.some((n) => world.pr(n).slow)) {
      row.slow += 1;
      row.slowH += h;
    }
  }
  console.log('  runs by role and outcome: runs, runner hours, slow runs (their hours), unlanded PRs held per run:');
  for (const [k, v] of Object.entries(rows).sort()) {
    console.log(
      `    ${k.padEnd(22)} ${String(v.n).padStart(4)} ${v.h.toFixed(1).padStart(6)} h  slow ${String(v.slow).padStart(4)} (${v.slowH.toFixed(1)} h)  ${(v.prs / v.n).toFixed(1)} PRs`,
    );
  }
}

/** With lanes: each lane's good PRs merged in the measurement window over those that arrived in it. */
function laneShares(world: World, policy: LanesPolicy): void {
  const start = world.prs[Math.floor(world.prs.length * 0.1)].arrival;
  const per = new Map<number, { arrived: number; merged: number }>();
  for (const pr of world.prs) {
    if (pr.bad) continue;
    const r = per.get(pr.lane) ?? { arrived: 0, merged: 0 };
    if (pr.arrival >= start && pr.arrival <= world.lastArrival) r.arrived += 1;
    if (pr.mergedAt !== null && pr.mergedAt >= start && pr.mergedAt <= world.lastArrival) r.merged += 1;
    per.set(pr.lane, r);
  }
  const shares = [...per].sort((a, b) => a[0] - b[0]).map(([l, r]) => `lane ${l} ${r.merged}/${r.arrived} (${(r.merged / Math.max(1, r.arrived)).toFixed(3)})`);
  console.log(`  lanes, good PRs merged / arrived in the window: ${shares.join(', ')}`);
  const { spanning, heldMs } = policy.spanStats;
  if (spanning) console.log(`  PRs spanning lanes: ${spanning}; PR time held behind a spanning PR: ${(heldMs / HOUR).toFixed(1)} h in all`);
}

/** Screen runs started before the last arrival: how many finished, how many were heavy (held a slow PR), their size and length. */
function screenRuns(world: World, end: number): void {
  const started = world.runs.filter((r) => r.tag.startsWith('screen') && r.startedAt !== null && r.startedAt <= end);
  const done = started.filter((r) => !r.canceled);
  const heavy = done.filter((r) => r.content.some((n) => world.pr(n).slow));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const prs = (rs: CiRun[]) => rs.reduce((a, r) => a + r.content.length, 0);
  console.log(
    `  screen runs: ${started.length} started, ${done.length} finished (${done.filter((r) => r.fails).length} failed), ` +
      `${heavy.length} of them heavy; mean ${mean(done.map((r) => r.content.length)).toFixed(1)} PRs, ${mean(done.map((r) => r.duration / MINUTE)).toFixed(1)} min; ` +
      `PRs in finished light runs ${prs(done) - prs(heavy)}, in heavy ${prs(heavy)}`,
  );
}

function breakdown(title: string, rows: Record<string, number>, total: number, unit: (x: number) => string): void {
  console.log(`  ${title}`);
  for (const [k, v] of Object.entries(rows).sort((a, b) => b[1] - a[1])) console.log(`    ${unit(v)}  ${k}`);
  void total;
}
export { breakdown };
