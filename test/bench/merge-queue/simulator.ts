import type { PlannerConfig } from '@/modules/merge-queues/planner';
import { BorsPolicy, SequentialPolicy, SpeculativePolicy } from './baselines';
import { LanesPolicy, PlannerPolicy } from './planner-policy';
import type { Policy } from './policy';
import { HOUR, type Scenario, World } from './world';

export type PolicyName = 'ours' | 'sequential' | 'github' | 'bors' | 'zuul';
export const POLICIES: readonly PolicyName[] = ['ours', 'github', 'zuul', 'bors', 'sequential'];

export interface RunMetrics {
  policy: PolicyName;
  /** Good PRs merged inside the window / good PRs that arrived inside it (see docs). */
  throughput: number;
  p50Hours: number;
  p90Hours: number;
  ciRunsPerMerged: number;
  badLanded: number;
  /**
   * Good PRs wrongly failed: failed while they would have passed alone on the base of the time
   * (not bad, and no PR they fail together with had landed; World.fail). A member of a bad pair
   * failed after its partner landed is rightly failed (`pairFailed`), not counted here.
   */
  goodFailed: number;
  /** goodFailed per 1,000 PRs of the scenario. */
  goodFailedPer1000: number;
  /** Members of bad pairs rightly failed (their partner had landed). */
  pairFailed: number;
  /** The livelock metric: the most failing CI runs any one PR sat in (counted per PR over runs whose content held it). */
  maxFailingRuns: number;
  /** Good PR heads blocked by an order-dependent conflict (a later PR went first). */
  orderBlocked: number;
  violations: number;
  maxBacklog: number;
  backlogAtEnd: number;
  drainHours: number;
  etaErrors: number[];
  merged: number;
  steps: number;
  unknownOutcomes: number;
}

/** Hard stop for policies that never catch up (sequential at high rates). */
const HORIZON_FACTOR = 40;

export function makePolicy(
  name: PolicyName,
  world: World,
  config: Partial<PlannerConfig> = {},
  oracleHeavy = false,
  spanRule: LanesPolicy['spanRule'] = 'barrier',
): Policy {
  switch (name) {
    case 'ours':
      if ((world.scenario.lanes ?? 0) > 1) return new LanesPolicy(world, config, spanRule);
      return Object.assign(new PlannerPolicy(world, config), { oracleHeavy });
    case 'sequential':
      return new SequentialPolicy(world);
    case 'github':
      return new SpeculativePolicy(world, 'github');
    case 'zuul':
      return new SpeculativePolicy(world, 'zuul');
    case 'bors':
      return new BorsPolicy(world);
  }
}

/** Runs one policy on one seeded scenario to completion (or the horizon) and measures it. */
export function simulate(
  scenario: Scenario,
  seed: number,
  policyName: PolicyName,
  options: {
    recordRuns?: boolean;
    config?: Partial<PlannerConfig>;
    oracleHeavy?: boolean;
    spanRule?: LanesPolicy['spanRule'];
    /** A policy of the caller's instead of `policyName`'s (bounds, bound.ts); the metrics keep `policyName`. */
    policy?: (world: World) => Policy;
  } = {},
): { metrics: RunMetrics; world: World; policy: Policy } {
  const world = new World(scenario, seed, { recordRuns: options.recordRuns });
  const policy = options.policy?.(world) ?? makePolicy(policyName, world, options.config, options.oracleHeavy, options.spanRule);
  for (const pr of world.prs) {
    world.events.schedule(pr.arrival, () => {
      // the PR was branched from the base as it is when it arrives
      pr.headBase = world.landed.length;
      policy.arrive(pr.number);
    });
  }
  const horizon = world.lastArrival * HORIZON_FACTOR + 48 * HOUR;
  for (let item = world.events.pop(); item; item = world.events.pop()) {
    if (item.at > horizon) break;
    item.fn();
  }
  const end = Math.min(world.now, horizon);
  return { metrics: measure(world, policy, policyName, end), world, policy };
}

function measure(world: World, policy: Policy, name: PolicyName, end: number): RunMetrics {
  const prs = world.prs;
  const windowStart = prs[Math.floor(prs.length * 0.1)].arrival;
  const windowEnd = world.lastArrival;
  let goodArrived = 0;
  let goodMergedInWindow = 0;
  const waits: number[] = [];
  const etaErrors: number[] = [];
  let goodFailed = 0;
  let merged = 0;
  let lastDone = 0;
  let pairFailed = 0;
  let maxFailingRuns = 0;
  for (const pr of prs) {
    if (pr.mergedAt !== null) merged += 1;
    maxFailingRuns = Math.max(maxFailingRuns, pr.failingRuns);
    lastDone = Math.max(lastDone, pr.mergedAt ?? pr.failedAt ?? end);
    if (pr.bad) continue;
    // A pair member rightly failed (its partner landed) could never merge: out of X* as a bad PR is.
    const pairCulprit = pr.failedAt !== null && !pr.wronglyFailed;
    if (pairCulprit) {
      pairFailed += 1;
      continue;
    }
    if (pr.arrival >= windowStart && pr.arrival <= windowEnd) goodArrived += 1;
    if (pr.mergedAt !== null && pr.mergedAt >= windowStart && pr.mergedAt <= windowEnd) goodMergedInWindow += 1;
    if (pr.failedAt !== null) {
      goodFailed += 1;
      continue;
    }
    const wait = (pr.mergedAt ?? end) - pr.arrival;
    waits.push(wait);
    if (pr.mergedAt !== null && pr.eta !== null && wait > 0) {
      etaErrors.push(Math.abs(pr.eta - pr.arrival - wait) / wait);
    }
  }
  waits.sort((a, b) => a - b);
  let maxBacklog = 0;
  for (let i = 0; i < prs.length; i += 10) maxBacklog = Math.max(maxBacklog, world.backlog(prs[i].arrival));
  return {
    policy: name,
    throughput: goodArrived === 0 ? 1 : goodMergedInWindow / goodArrived,
    p50Hours: quantile(waits, 0.5) / HOUR,
    p90Hours: quantile(waits, 0.9) / HOUR,
    ciRunsPerMerged: merged === 0 ? Infinity : world.ciRunsStarted / merged,
    badLanded: world.badLanded,
    goodFailed,
    goodFailedPer1000: (goodFailed / prs.length) * 1000,
    pairFailed,
    maxFailingRuns,
    orderBlocked: world.orderConflicts.size,
    violations: world.violations.length + policy.violations(),
    maxBacklog,
    backlogAtEnd: world.backlog(windowEnd),
    drainHours: Math.max(0, lastDone - windowEnd) / HOUR,
    etaErrors,
    merged,
    steps: policy instanceof PlannerPolicy ? policy.steps : 0,
    unknownOutcomes: policy instanceof PlannerPolicy ? policy.unknownOutcomes : 0,
  };
}

export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}
