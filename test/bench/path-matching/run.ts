/*
 * npm run bench:path-matching [-- --budget-ms 5000 --deadline-ms 2000]
 *
 * The worst time one enqueue spends matching a PR's changed paths against its queue's path groups
 * (issue 41), the old matcher (planner/glob.ts, a pattern at a time, on the API's event loop inside
 * the queue's transaction) beside the new one (planner/path-matcher.ts, the groups compiled into
 * one automaton; the API runs it on a worker thread with MERGE_QUEUE_PATH_MATCH_DEADLINE_MS), in
 * one run, on the same groups and paths:
 *   - issue 41's finding: 16 groups x 50 patterns of `**` 58 times and 32 brace alternatives (the old
 *     limits; the new ones refuse them) against 299 paths 120 directories deep;
 *   - the worst the new limits allow, three shapes: `**` four times with stars between (what made
 *     the old matcher slow), `?` runs after a star (what makes an automaton grow with every
 *     character), and both, against 3,000 paths (the most LOCAL_GIT lists) of about 1,020
 *     characters (under the 1,024 matched).
 * Each group set ends with a pattern every path matches (`**`, the last group's last), so every
 * path is tried against every pattern before it (no early "in no group" answer). A matcher that
 * would take longer than --budget-ms on a set is stopped there and its time per enqueue
 * extrapolated from the share of the work it did (marked ~). The deadline column is what an
 * enqueue costs the API with the new matcher: its time, or the deadline, whichever is less (past
 * it the PR is in every lane).
 */
import { compileGlob } from '@/modules/merge-queues/planner/glob';
import { compilePathGroups, groupsOf } from '@/modules/merge-queues/planner/path-matcher';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const BUDGET_MS = Number(arg('budget-ms') ?? 5_000);
const DEADLINE_MS = Number(arg('deadline-ms') ?? 2_000);

type Groups = { name: string; paths: string[] }[];

/** 16 groups of 50 patterns from `pattern(g, p)`, the last one `**`. */
function groups(pattern: (g: number, p: number) => string): Groups {
  return Array.from({ length: 16 }, (_, g) => ({
    name: `g${g}`,
    paths: Array.from({ length: 50 }, (_, p) => (g === 15 && p === 49 ? '**' : pattern(g, p))),
  }));
}

let seed = 41;
const ab = (length: number) => Array.from({ length }, () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0x100 ? 'a' : 'b')).join('');

/** `count` paths `depth` directories deep (`d000abcd/...`), about `length` characters. */
function deepPaths(count: number, depth: number, length: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const dirs = Array.from({ length: depth }, (_, d) => `d${String((d + i) % 1000).padStart(3, '0')}abcd`).join('/');
    return `${dirs}/f${i}`.slice(-length);
  });
}

/** `count` paths of three shared directories and a file of 250 characters of a and b (about 1,020 characters). */
function abPaths(count: number): string[] {
  const dirs = [ab(254), ab(254), ab(254)].join('/');
  return Array.from({ length: count }, (_, i) => `${dirs}/${ab(250)}-${String(i).padStart(4, '0')}`);
}

const SCENARIOS: { name: string; groups: Groups; paths: string[] }[] = [
  {
    name: "issue 41's finding (old limits): ** x58 + 32 alternatives, 299 paths 120 deep",
    groups: groups((g, p) => `${'**/'.repeat(58)}{a,b}{c,d}{e,f}{g,h}{i,${g}-${p}}`),
    paths: deepPaths(299, 120, 1_200),
  },
  {
    name: 'new limits, ** x4 with stars between, 3,000 paths 113 deep',
    groups: groups((g, p) => `**/d*a*/**/*b*c*/**/*d*e*/**/x${g}-${p}${p % 4 === 0 ? '{a,b}' : ''}`),
    paths: deepPaths(3_000, 113, 1_020),
  },
  {
    name: 'new limits, ? runs after a star (automaton grows), 3,000 paths of a/b',
    groups: groups((g, p) => `**/*${(g * 50 + p) % 4 === 0 ? '{a,b}' : p % 2 ? 'a' : 'b'}${'?'.repeat(150 - (p % 10))}*/**`),
    paths: abPaths(3_000),
  },
  {
    name: 'new limits, both, 3,000 paths of a/b',
    groups: groups((g, p) => `**/*a*/**/*${p % 2 ? 'a' : 'b'}${'?'.repeat(60 - (p % 10))}*/**/*${p % 4 === 0 ? '{a,b}' : 'b'}`),
    paths: abPaths(3_000),
  },
];

/** Runs `step(i)` for i = 0..total-1 until the budget is spent; the whole run's time, measured or extrapolated. */
function timed(total: number, step: (i: number) => void): { ms: number; extrapolated: boolean } {
  const started = performance.now();
  let done = 0;
  while (done < total) {
    step(done++);
    if (performance.now() - started > BUDGET_MS) break;
  }
  const ms = performance.now() - started;
  return { ms: (ms * total) / done, extrapolated: done < total };
}

const show = (t: { ms: number; extrapolated: boolean }) => {
  const text = t.ms >= 120_000 ? `${(t.ms / 60_000).toFixed(1)} min` : t.ms >= 10_000 ? `${(t.ms / 1_000).toFixed(1)} s` : `${t.ms.toFixed(0)} ms`;
  return `${t.extrapolated ? '~' : ''}${text}`;
};

console.log(`path matching, worst time per enqueue (budget ${BUDGET_MS} ms per matcher and set; deadline ${DEADLINE_MS} ms; node ${process.version})\n`);
const rows = [['groups and paths', 'alternatives', 'old (glob.ts, inline)', 'new (compiled)', 'new as the API runs it']];
for (const scenario of SCENARIOS) {
  const patterns = scenario.groups.flatMap((g) => g.paths);
  // Old: every pattern against every path (the last pattern matches: no early answer).
  let compiledOld: ((path: string) => boolean)[] = [];
  const old = timed(scenario.paths.length, (i) => {
    if (i === 0) compiledOld = patterns.map(compileGlob);
    const path = scenario.paths[i];
    for (const glob of compiledOld) {
      try {
        glob(path);
      } catch {
        // Deeper than its recursion goes: a RangeError (a 500 before issue 41).
      }
    }
  });
  // New: compiled once (counted), then every path through the automaton.
  let compiled = compilePathGroups(scenario.groups);
  const work = { steps: 0, nextStop: Infinity };
  const fresh = timed(scenario.paths.length, (i) => {
    if (i === 0) compiled = compilePathGroups(scenario.groups);
    groupsOf(compiled, scenario.paths[i], work);
  });
  const api = { ms: Math.min(fresh.ms, DEADLINE_MS), extrapolated: fresh.ms < DEADLINE_MS && fresh.extrapolated };
  const alternatives = compiled.starts.length;
  rows.push([scenario.name, String(alternatives), show(old), show(fresh), `${show(api)}${fresh.ms > DEADLINE_MS ? ' (deadline: every lane)' : ''}`]);
  console.log(`${scenario.name}: old ${show(old)}, new ${show(fresh)}, as the API runs it ${show(api)}`);
}
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
console.log('');
for (const [i, row] of rows.entries()) {
  console.log(`| ${row.map((cell, c) => cell.padEnd(widths[c])).join(' | ')} |`);
  if (i === 0) console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
}
