/*
 * npm run bench:commit-statuses [-- --sizes 100,1000,5000 --runs 15]
 *
 * What a GitHub queue posts after one change, as its line grows: for a paused queue of N queued
 * PRs, the commit statuses `statusChanges` (commit-statuses.ts) decides for three changes (a PR
 * arriving at the back, the head leaving, a PR in the middle getting a new head), how many, and
 * the median time to decide them. Each status is one GitHub request; GitHub allows about 80
 * content-creating requests a minute.
 */
import { statusChanges } from '@/modules/merge-queues/commit-statuses/commit-statuses';
import { createMergeQueueState, type MergeQueueEvent, type MergeQueueState, reduceMergeQueue } from '@/modules/merge-queues/planner';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const SIZES = (arg('sizes') ?? '100,1000,5000').split(',').map(Number);
const RUNS = Number(arg('runs') ?? 15);
const NOW = Date.UTC(2026, 10, 27, 12);

function apply(s: MergeQueueState, event: Record<string, unknown>): MergeQueueState {
  return reduceMergeQueue(s, { at: NOW, ...event } as MergeQueueEvent).state;
}

function line(n: number): MergeQueueState {
  let s = apply(createMergeQueueState({ baseSha: 'base' }), { type: 'pause' });
  for (let i = 1; i <= n; i++) s = apply(s, { type: 'enqueue', entry: { id: `e${i}`, number: i, headSha: `h${i}`, url: `https://git.example/pull/${i}` } });
  return s;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const rows: string[] = [];
for (const n of SIZES) {
  const before = line(n);
  const changes: Record<string, MergeQueueState> = {
    'arrival at the back': apply(before, { type: 'enqueue', entry: { id: 'new', number: n + 1, headSha: 'hnew', url: 'https://git.example/pull/new' } }),
    'the head leaves': apply(before, { type: 'remove', entryId: 'e1' }),
    'new head mid-line': apply(before, { type: 'headUpdated', entryId: `e${Math.ceil(n / 2)}`, headSha: 'hmid' }),
  };
  for (const [name, after] of Object.entries(changes)) {
    let posted = 0;
    const times: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const t = process.hrtime.bigint();
      posted = statusChanges(before, after, NOW).length;
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    rows.push(`| ${n} | ${name} | ${posted} | ${median(times).toFixed(2)} |`);
  }
  process.stdout.write(`› ${n} queued PRs measured\n`);
}
process.stdout.write(['', '| queued PRs | change | statuses posted | decide (ms, median) |', '|---:|---|---:|---:|', ...rows, ''].join('\n'));
