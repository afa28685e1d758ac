import { simulate } from './simulator';
import { type Scenario } from './world';
const sc: Scenario = { name: 'x', ratePerHour: 30, badRate: Number(process.argv[2] ?? 0.03), flakeRate: 0.02, prs: 1500, conflictRate: 0.004, orderConflictRate: 0.01, slowRate: 0.1, runners: 4, crashRate: 0, lanes: Number(process.argv[4] ?? 4) };
const { world, metrics } = simulate(sc, Number(process.argv[3] ?? 1), 'ours', { config: JSON.parse(process.argv[5] ?? '{}') });
const start = world.prs[150].arrival, end = world.lastArrival;
const per = new Map<number, { arrived: number; merged: number }>();
for (const pr of world.prs) {
  if (pr.bad) continue;
  const r = per.get(pr.lane) ?? { arrived: 0, merged: 0 };
  if (pr.arrival >= start && pr.arrival <= end) r.arrived += 1;
  if (pr.mergedAt !== null && pr.mergedAt >= start && pr.mergedAt <= end) r.merged += 1;
  per.set(pr.lane, r);
}
console.log(`throughput ${metrics.throughput.toFixed(3)} violations ${metrics.violations} badLanded ${metrics.badLanded} orderBlocked ${metrics.orderBlocked}`);
for (const [l, r] of [...per].sort()) console.log(`lane ${l}: arrived ${r.arrived} merged ${r.merged} share ${(r.merged / r.arrived).toFixed(3)}`);
