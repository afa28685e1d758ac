import { ewma } from './ewma';
import type { Ctx } from './step';
import type { EntryState } from './types';
import { releaseEntry } from './withdrawal';

/*
 * A PR that failed alone: its candidate was the base plus itself. Shared by blame (a batch of
 * one failed on the base) and prefix bisection (chain.ts: the last suspect of a failed set whose
 * other PRs all landed, so the failed candidate was exactly the base plus it).
 */

/**
 * Counts a failure alone: within the flaky budget the PR is retried alone at the back of the line
 * (it loses its place, order.ts); past it, the PR is `failed`. It may still be in its batch
 * (blame) or already queued (prefix bisection).
 */
export function failedAlone(ctx: Ctx, e: EntryState): void {
  const { s } = ctx;
  e.bisectSize = null;
  e.failuresAlone += 1;
  e.cleared = false;
  e.suspectGroup = null;
  ctx.changed = true;
  if (e.failuresAlone > s.config.flakyRetries) {
    s.stats.failureRate = ewma(s.stats.failureRate, s.config.failureEwmaAlpha, 1);
    releaseEntry(ctx, e, 'failed');
  } else {
    // A PR that failed alone loses its place (order.ts): its retry is queued at the back.
    toBackOfLine(ctx, e);
    releaseEntry(ctx, e, 'queued');
  }
}

/** Gives `e` the next arrival position: it is planned after every PR queued so far. */
export function toBackOfLine(ctx: Ctx, e: EntryState): void {
  ctx.s.counters.entry += 1;
  e.position = ctx.s.counters.entry;
  ctx.changed = true;
}
