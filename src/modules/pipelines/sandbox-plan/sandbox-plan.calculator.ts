import { compareChoices, largestType, offer, slotSize, typesInRegion, type HostChoice } from './host-fit';
import { maxWeightAntichain } from './max-antichain';
import { buildStepGraph } from './step-graph';
import type { PlanStep, PoolStep, SandboxPlanInput, SandboxPlanResult, SandboxPool } from './sandbox-plan.types';

/**
 * The sandbox host plan of a pipeline version: one pool per execution environment that has steps.
 *
 * Rule -> function:
 * - steps of a pool: the version's steps in that environment, sorted by name (`poolSteps`);
 * - maxConcurrentSandboxes: the maximum-weight antichain (weights = parallelism) of the dependency
 *   order restricted to the pool's steps, comparability running through steps of every environment.
 *   Exact, by weighted Dilworth as a minimum flow with lower bounds solved by Dinic on the dependency
 *   graph itself, never its transitive closure (`maxWeightAntichain`);
 * - slot: the pool's largest step per resource plus the per-microVM overhead (`slotSize`);
 *   slotsPerHost: the minimum over cpu, memory and disk of the slots that fit in a host's resources
 *   minus the host reservation (`slotsPerHost`); hostsNeeded = ceil(maxConcurrentSandboxes / slotsPerHost);
 * - instanceType: among the vendor catalogue's microVM-capable types offered in the environment's
 *   region, the cheapest hostsNeeded x hourly price, ties by fewer hosts, fewer stranded slots, then
 *   name (`compareChoices`), so the plan depends only on its inputs.
 *
 * Bounds: the result is exact (hostsNeeded x slotsPerHost >= maxConcurrentSandboxes, and no type of
 * the catalogue holds the same load for less). Time O(n + m) per pool plus Dinic on n + m
 * (O(V^2 E) worst case, milliseconds at 5,000 steps: npm run bench:sandbox-plan); memory O(n + m).
 * Pure: no I/O, no clock, no randomness; the input is not modified.
 */
export function planSandboxes(input: SandboxPlanInput): SandboxPlanResult {
  const { steps, overheads } = input;
  const built = buildStepGraph(steps);
  if (!built.ok) return { ok: false, problem: { kind: 'invalidGraph', problem: built.problem } };
  const environments = new Map(input.environments.map((e) => [e.id, e]));
  const byEnvironment = new Map<string, number[]>();
  for (let i = 0; i < steps.length; i++) {
    const id = steps[i].executionEnvironmentId;
    if (!environments.has(id)) return { ok: false, problem: { kind: 'unknownEnvironment', step: steps[i].name, executionEnvironmentId: id } };
    const members = byEnvironment.get(id);
    if (members) members.push(i);
    else byEnvironment.set(id, [i]);
  }

  const pools: SandboxPool[] = [];
  const weight = new Float64Array(steps.length);
  for (const environmentId of [...byEnvironment.keys()].sort()) {
    const environment = environments.get(environmentId)!;
    const members = byEnvironment.get(environmentId)!;
    const catalogue = input.catalogues[environment.vendor];
    if (!catalogue) return { ok: false, problem: { kind: 'noCatalogue', executionEnvironmentId: environmentId, vendor: environment.vendor } };
    const types = typesInRegion(catalogue, environment.region);
    if (types.length === 0)
      return {
        ok: false,
        problem: { kind: 'noInstanceTypeInRegion', executionEnvironmentId: environmentId, vendor: environment.vendor, region: environment.region },
      };
    const pooled = poolSteps(steps, members);

    const fits = (load: PoolStep[]) => types.some((t) => offer(catalogue, t, environment.region, slotSize(load, overheads), 1, overheads));
    const lone = pooled.find((step) => !fits([step]));
    if (lone)
      return {
        ok: false,
        problem: { kind: 'fitsNoInstanceType', executionEnvironmentId: environmentId, steps: [lone.name], largestType: largestType(types).name },
      };

    weight.fill(0);
    for (const i of members) weight[i] = steps[i].parallelism ?? 1;
    const maxConcurrentSandboxes = maxWeightAntichain(built.graph, weight).weight;

    const slot = slotSize(pooled, overheads);
    let best: HostChoice | undefined;
    for (const type of types) {
      const candidate = offer(catalogue, type, environment.region, slot, maxConcurrentSandboxes, overheads);
      if (candidate && (!best || compareChoices(candidate, best) < 0)) best = candidate;
    }
    if (!best) {
      const setters = new Set<string>();
      for (const key of ['cpu', 'memoryGiB', 'diskGiB'] as const) setters.add(pooled.reduce((a, b) => (b[key] > a[key] ? b : a)).name);
      return {
        ok: false,
        problem: { kind: 'fitsNoInstanceType', executionEnvironmentId: environmentId, steps: [...setters].sort(), largestType: largestType(types).name },
      };
    }
    pools.push({
      executionEnvironmentId: environmentId,
      hostsNeeded: best.hostsNeeded,
      instanceType: best.type.name,
      maxConcurrentSandboxes,
      slotsPerHost: best.slotsPerHost,
      steps: pooled,
    });
  }
  return { ok: true, pools };
}

/** The pool's steps with the resources the plan reports, in name order (stable whatever the input order). */
function poolSteps(steps: readonly PlanStep[], members: readonly number[]): PoolStep[] {
  return members
    .map((i) => ({ name: steps[i].name, cpu: steps[i].cpu, memoryGiB: steps[i].memoryGiB, diskGiB: steps[i].diskGiB }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
