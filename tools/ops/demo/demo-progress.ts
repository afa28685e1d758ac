/**
 * The demo's progress lines after the banner: what a newcomer watches happen to the queue (a
 * batch under test, PRs landing, one failing and leaving the queue), read from the API as any
 * client reads it (GET /merge-queues/{id}), one line per change.
 */
import type { DemoQueue } from './demo-queue';

interface Queue {
  entries: { number: number; status: string; block?: string }[];
  batches: { id: string; status: string; prNumbers: number[]; headSha?: string }[];
}

const FINAL = new Set(['merged', 'failed', 'removed']);

/** The lines that tell what changed from `before` to `now` (pure: the unit spec drives it). */
export function progressLines(before: Queue | undefined, now: Queue, titles: Map<number, string>): string[] {
  const lines: string[] = [];
  const pr = (n: number) => `#${n}${titles.has(n) ? ` "${titles.get(n)}"` : ''}`;
  for (const batch of now.batches) {
    const was = before?.batches.find((b) => b.id === batch.id)?.status;
    if (was === batch.status || !['testing', 'landed', 'failed'].includes(batch.status)) continue;
    const prs = batch.prNumbers.map((n) => `#${n}`).join(' ');
    if (batch.status === 'testing') lines.push(`CI is testing ${prs}${batch.headSha ? ` (candidate ${batch.headSha.slice(0, 12)})` : ''}`);
    else if (batch.status === 'landed') lines.push(`landed ${prs}: the base branch moved`);
    else lines.push(`the candidate of ${prs} failed CI`);
  }
  for (const entry of now.entries) {
    const was = before?.entries.find((e) => e.number === entry.number)?.status;
    if (was === entry.status) continue;
    if (entry.status === 'merged') lines.push(`${pr(entry.number)} merged`);
    else if (entry.status === 'failed' || entry.status === 'removed')
      lines.push(`${pr(entry.number)} ${entry.status}${entry.block ? `: ${entry.block}` : ''} (it left the queue; the PRs behind it move up)`);
    else if (!before) lines.push(`${pr(entry.number)} ${entry.status}`);
  }
  return lines;
}

/** Whether every PR of the queue reached a final state. */
export function settled(queue: Queue): boolean {
  return queue.entries.length > 0 && queue.entries.every((e) => FINAL.has(e.status));
}

/** Prints progress lines (`› demo: ...`) until every PR is final, then a summary; stops early when `stopped()` says so. */
export async function watchDemo(demo: DemoQueue, write: (line: string) => void, stopped: () => boolean, everyMs = 500): Promise<void> {
  let before: Queue | undefined;
  while (!stopped()) {
    const res = await demo.api.call<{ data: Queue }>('GET', `/merge-queues/${demo.queueId}`).catch(() => undefined);
    if (res) {
      const now = res.body.data;
      for (const line of progressLines(before, now, demo.titles)) write(`› demo: ${line}`);
      before = now;
      if (settled(now)) {
        const merged = now.entries.filter((e) => e.status === 'merged').map((e) => `#${e.number}`);
        const out = now.entries.filter((e) => e.status !== 'merged').map((e) => `#${e.number}`);
        write(`› demo: done: ${merged.join(' ')} landed, ${out.join(' ') || 'none'} failed. Enqueue more with POST /merge-queues/${demo.queueId}/entries.`);
        return;
      }
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
