import { simulate } from './simulator';
import { HOUR, type Scenario } from './world';
const sc: Scenario = { name: 'x', ratePerHour: 30, badRate: Number(process.argv[2] ?? 0.03), flakeRate: 0.02, prs: 1500, conflictRate: 0.004, orderConflictRate: 0.01, slowRate: 0.1, runners: 4, crashRate: 0 };
const { world, metrics } = simulate(sc, Number(process.argv[3] ?? 1), 'ours', { recordRuns: true });
const end = world.lastArrival;
const rows: Record<string, { n: number; h: number; slow: number; slowH: number; prs: number }> = {};
for (const r of world.runs) {
  if (r.startedAt === null || r.startedAt > end) continue;
  const h = (Math.min(r.finishedAt ?? end, end) - r.startedAt) / HOUR;
  const role = r.tag.startsWith('probe') ? 'probe' : r.tag.startsWith('screen') ? 'screen' : 'chain';
  const k = `${role} ${r.canceled ? 'cancelled' : r.fails ? 'failed' : world.isLanded(r.sha) ? 'landed' : 'passed-unused'}`;
  const slow = r.content.some((n) => world.pr(n).slow);
  const row = (rows[k] ??= { n: 0, h: 0, slow: 0, slowH: 0, prs: 0 });
  row.n += 1; row.h += h; row.prs += r.content.length;
  if (slow) { row.slow += 1; row.slowH += h; }
}
console.log(`throughput ${metrics.throughput.toFixed(3)}; runner-hours ${(4 * end / HOUR).toFixed(1)}`);
for (const [k, v] of Object.entries(rows).sort()) console.log(`${k.padEnd(28)} runs ${String(v.n).padStart(4)}  h ${v.h.toFixed(1).padStart(6)}  slow runs ${String(v.slow).padStart(4)} (${v.slowH.toFixed(1)} h)  content/run ${(v.prs / v.n).toFixed(1)}`);
