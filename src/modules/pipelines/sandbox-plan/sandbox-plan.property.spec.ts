import fc from 'fast-check';
import { bruteForceMaxConcurrent, reachability } from '@test/support/sandbox-plan/brute-force';
import { TEST_OVERHEADS, generatePipeline, testCatalogue } from '@test/support/sandbox-plan/generators';
import { hostCapacity, hourlyMicroUsd, slotSize, slotsPerHost, typesInRegion } from './host-fit';
import { maxWeightAntichain } from './max-antichain';
import { planSandboxes } from './sandbox-plan.calculator';
import { buildStepGraph } from './step-graph';
import type { InstanceCatalogue, PlanStep, SandboxPlanInput, SandboxPool } from './sandbox-plan.types';

const ENVIRONMENTS = [
  { id: 'env-a', vendor: 'AWS', region: 'r1' },
  { id: 'env-b', vendor: 'AWS', region: 'r1' },
  { id: 'env-c', vendor: 'GCP', region: 'r2' },
];

/** A random DAG of up to `max` steps: edges only from a lower to a higher index, names shuffled by the caller. */
const smallPipeline = (max: number) =>
  fc
    .integer({ min: 1, max })
    .chain((n) =>
      fc.record({
        n: fc.constant(n),
        edges: fc.array(fc.tuple(fc.integer({ min: 0, max: n - 1 }), fc.integer({ min: 0, max: n - 1 })), { maxLength: n * 2 }),
        envs: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: n, maxLength: n }),
        weights: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: n, maxLength: n }),
        sizes: fc.array(
          fc.record({ cpu: fc.constantFrom(0.5, 1, 2, 3.5, 8), memoryGiB: fc.constantFrom(0.5, 1, 4, 12, 30), diskGiB: fc.constantFrom(1, 10, 40, 200) }),
          { minLength: n, maxLength: n },
        ),
      }),
    )
    .map(({ n, edges, envs, weights, sizes }): PlanStep[] =>
      Array.from({ length: n }, (_, v) => ({
        name: `s${v}`,
        executionEnvironmentId: ENVIRONMENTS[envs[v]].id,
        ...sizes[v],
        parallelism: weights[v],
        dependsOn: [...new Set(edges.filter(([a, b]) => a < b && b === v).map(([a]) => `s${a}`))],
      })),
    );

const catalogueArb = (vendor: string, region: string) =>
  fc
    .array(
      fc.record({
        vcpu: fc.integer({ min: 4, max: 192 }),
        memoryGiB: fc.integer({ min: 16, max: 1024 }),
        localDiskGiB: fc.integer({ min: 150, max: 8000 }),
        usd: fc.double({ min: 0.1, max: 30, noNaN: true }),
      }),
      { minLength: 1, maxLength: 6 },
    )
    .map((types) =>
      testCatalogue(vendor, region, [
        ...types.map((t, i) => ({ ...t, name: `${vendor.toLowerCase()}-t${i}` })),
        { name: `${vendor.toLowerCase()}-huge`, vcpu: 256, memoryGiB: 4096, localDiskGiB: 30000, usd: 50 },
      ]),
    );

const inputArb = (max: number) =>
  fc
    .record({ steps: smallPipeline(max), aws: catalogueArb('AWS', 'r1'), gcp: catalogueArb('GCP', 'r2') })
    .map(({ steps, aws, gcp }): SandboxPlanInput => ({ steps, environments: ENVIRONMENTS, catalogues: { AWS: aws, GCP: gcp }, overheads: TEST_OVERHEADS }));

function plan(input: SandboxPlanInput): SandboxPool[] {
  const result = planSandboxes(input);
  if (!result.ok) throw new Error(`no plan: ${JSON.stringify(result.problem)}`);
  return result.pools;
}

function catalogueOf(input: SandboxPlanInput, environmentId: string): { catalogue: InstanceCatalogue; region: string } {
  const environment = input.environments.find((e) => e.id === environmentId)!;
  return { catalogue: input.catalogues[environment.vendor], region: environment.region };
}

describe('planSandboxes (properties)', () => {
  it('maxConcurrentSandboxes equals brute force on graphs up to 12 steps', () => {
    fc.assert(
      fc.property(inputArb(12), (input) => {
        for (const pool of plan(input)) expect(pool.maxConcurrentSandboxes).toBe(bruteForceMaxConcurrent(input.steps, pool.executionEnvironmentId));
      }),
      { numRuns: 400 },
    );
  });

  it('the antichain read off the minimum cut is an antichain of the pool with the reported weight', () => {
    fc.assert(
      fc.property(smallPipeline(12), fc.integer({ min: 0, max: 2 }), (steps, env) => {
        const built = buildStepGraph(steps);
        if (!built.ok) throw new Error('generated graph is not a DAG');
        const weights = steps.map((s) => (s.executionEnvironmentId === ENVIRONMENTS[env].id ? (s.parallelism ?? 1) : 0));
        const { weight, steps: antichain } = maxWeightAntichain(built.graph, weights);
        const reach = reachability(steps);
        for (const a of antichain) for (const b of antichain) expect(reach[a][b]).toBe(false);
        expect(antichain.every((i) => weights[i] > 0)).toBe(true);
        expect(antichain.reduce((sum, i) => sum + weights[i], 0)).toBe(weight);
      }),
      { numRuns: 400 },
    );
  });

  it('every pool holds its peak: hostsNeeded x slotsPerHost >= maxConcurrentSandboxes, with fewer hosts not enough', () => {
    fc.assert(
      fc.property(inputArb(12), (input) => {
        for (const pool of plan(input)) {
          expect(pool.hostsNeeded * pool.slotsPerHost).toBeGreaterThanOrEqual(pool.maxConcurrentSandboxes);
          expect((pool.hostsNeeded - 1) * pool.slotsPerHost).toBeLessThan(pool.maxConcurrentSandboxes);
          expect(pool.slotsPerHost).toBeGreaterThanOrEqual(1);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('no cheaper catalogue type could hold the same load', () => {
    fc.assert(
      fc.property(inputArb(12), (input) => {
        for (const pool of plan(input)) {
          const { catalogue, region } = catalogueOf(input, pool.executionEnvironmentId);
          const chosen = catalogue.types.find((t) => t.name === pool.instanceType)!;
          const chosenCost = pool.hostsNeeded * hourlyMicroUsd(catalogue, chosen, region);
          const slot = slotSize(pool.steps, input.overheads);
          for (const type of typesInRegion(catalogue, region)) {
            const slots = slotsPerHost(slot, hostCapacity(type, input.overheads));
            if (slots === 0) continue;
            expect(Math.ceil(pool.maxConcurrentSandboxes / slots) * hourlyMicroUsd(catalogue, type, region)).toBeGreaterThanOrEqual(chosenCost);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is identical for a shuffled step order', () => {
    fc.assert(
      fc.property(inputArb(12), fc.func(fc.integer()), (input, key) => {
        const shuffled = [...input.steps]
          .map((s, i) => ({ s, k: key(i) }))
          .sort((a, b) => a.k - b.k)
          .map(({ s }) => s);
        expect(plan({ ...input, steps: shuffled })).toEqual(plan(input));
      }),
      { numRuns: 300 },
    );
  });

  it('adding a dependency edge never raises maxConcurrentSandboxes', () => {
    fc.assert(
      fc.property(inputArb(12), fc.nat(), fc.nat(), (input, x, y) => {
        const n = input.steps.length;
        const [a, b] = [x % n, y % n].sort((p, q) => p - q);
        fc.pre(a !== b);
        const steps = input.steps.map((s, i) => (i === b ? { ...s, dependsOn: [...new Set([...(s.dependsOn ?? []), `s${a}`])] } : s));
        const before = new Map(plan(input).map((p) => [p.executionEnvironmentId, p.maxConcurrentSandboxes]));
        for (const pool of plan({ ...input, steps })) expect(pool.maxConcurrentSandboxes).toBeLessThanOrEqual(before.get(pool.executionEnvironmentId)!);
      }),
      { numRuns: 300 },
    );
  });

  it('recovers a valid antichain of the reported weight on 400-step generated pipelines', () => {
    for (const seed of [1, 2, 3]) {
      const { steps } = generatePipeline({ steps: 400, environments: 3, randomEdgesPerStep: 1, seed });
      const built = buildStepGraph(steps);
      if (!built.ok) throw new Error('generated graph is not a DAG');
      const weights = steps.map((s) => (s.executionEnvironmentId === 'env-0' ? (s.parallelism ?? 1) : 0));
      const { weight, steps: antichain } = maxWeightAntichain(built.graph, weights);
      const reach = reachability(steps);
      for (const a of antichain) for (const b of antichain) expect(reach[a][b]).toBe(false);
      expect(antichain.reduce((sum, i) => sum + weights[i], 0)).toBe(weight);
    }
  });
});
