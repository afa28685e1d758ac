import { type Ctx, isFinalBatch, LIVE_ENTRY } from './step';

/**
 * History: drops the oldest final entries and batches beyond `historyLimit`; live ones are never
 * dropped, nor a final batch a kept entry still points at. The reducer prunes before applying the
 * event, so an entry that turns final stays visible for at least one revision.
 */
export function prune(ctx: Ctx): void {
  const { s } = ctx;
  const limit = s.config.historyLimit;
  const finalEntries = s.entries.filter((e) => !LIVE_ENTRY.includes(e.status)).length;
  if (finalEntries > limit) {
    let drop = finalEntries - limit;
    s.entries = s.entries.filter((e) => {
      if (drop > 0 && !LIVE_ENTRY.includes(e.status)) {
        drop -= 1;
        return false;
      }
      return true;
    });
  }
  const finalBatches = s.batches.filter(isFinalBatch).length;
  if (finalBatches > limit) {
    let drop = finalBatches - limit;
    const referenced = new Set(s.entries.map((e) => e.batchId));
    s.batches = s.batches.filter((b) => {
      if (drop > 0 && isFinalBatch(b) && !referenced.has(b.id)) {
        drop -= 1;
        return false;
      }
      return true;
    });
  }
}
