import awsCatalogue from '@/modules/execution-environments/vendors/aws.catalogue.json';
import gcpCatalogue from '@/modules/execution-environments/vendors/gcp.catalogue.json';
import overheads from './sandbox-overheads.json';
import { TEST_OVERHEADS, testCatalogue } from '@test/support/sandbox-plan/generators';
import { planSandboxes } from './sandbox-plan.calculator';
import { buildStepGraph } from './step-graph';
import type { InstanceCatalogue, PlanStep, SandboxPlanInput } from './sandbox-plan.types';

const step = (name: string, env: string, dependsOn: string[] = [], extra: Partial<PlanStep> = {}): PlanStep => ({
  name,
  executionEnvironmentId: env,
  cpu: 2,
  memoryGiB: 4,
  diskGiB: 10,
  dependsOn,
  ...extra,
});

describe(buildStepGraph.name, () => {
  it('names a duplicate step, an unknown dependency, and a cycle in dependency order', () => {
    expect(buildStepGraph([step('a', 'e'), step('a', 'e')])).toEqual({ ok: false, problem: { kind: 'duplicateStepName', steps: ['a'] } });
    expect(buildStepGraph([step('a', 'e', ['ghost'])])).toEqual({ ok: false, problem: { kind: 'unknownDependency', step: 'a', dependsOn: 'ghost' } });
    const cycle = buildStepGraph([step('root', 'e'), step('a', 'e', ['root', 'c']), step('b', 'e', ['a']), step('c', 'e', ['b'])]);
    expect(cycle.ok).toBe(false);
    const steps = (cycle as { problem: { steps: string[] } }).problem.steps;
    // Each step depends on the one before it, the first on the last.
    expect(steps).toHaveLength(3);
    const order = ['a', 'b', 'c'];
    const rotation = order.indexOf(steps[0]);
    expect(steps).toEqual([...order.slice(rotation), ...order.slice(0, rotation)]);
    expect(buildStepGraph([step('self', 'e', ['self'])])).toEqual({ ok: false, problem: { kind: 'cycle', steps: ['self'] } });
  });

  it('handles a 5,000-step chain without recursion', () => {
    const chain = Array.from({ length: 5000 }, (_, i) => step(`s${i}`, 'e', i ? [`s${i - 1}`] : []));
    expect(buildStepGraph(chain).ok).toBe(true);
  });
});

describe(planSandboxes.name, () => {
  const catalogues = {
    AWS: testCatalogue('AWS', 'r1', [
      { name: 'small.metal', vcpu: 18, memoryGiB: 40, localDiskGiB: 400, usd: 1 },
      { name: 'big.metal', vcpu: 66, memoryGiB: 136, localDiskGiB: 1300, usd: 3.5 },
    ]),
  };
  const environments = [
    { id: 'env-1', vendor: 'AWS', region: 'r1' },
    { id: 'env-2', vendor: 'AWS', region: 'r1' },
  ];

  it('computes a hand-checked plan: diamond with a cross-environment path', () => {
    // build -> (test-a x3, test-b, lint) -> package (env-2) -> deploy (env-1).
    // In env-1, test-a (parallelism 3), test-b and lint overlap: 5. deploy comes after all of them
    // through package, which runs in env-2.
    const steps = [
      step('build', 'env-1', [], { cpu: 4, memoryGiB: 8, diskGiB: 30 }),
      step('test-a', 'env-1', ['build'], { parallelism: 3 }),
      step('test-b', 'env-1', ['build']),
      step('lint', 'env-1', ['build'], { cpu: 1, memoryGiB: 2, diskGiB: 5 }),
      step('package', 'env-2', ['test-a', 'test-b', 'lint']),
      step('deploy', 'env-1', ['package']),
    ];
    const result = planSandboxes({ steps, environments, catalogues, overheads: TEST_OVERHEADS });
    // Slot env-1: 4.25 cpu, 8.25 GiB, 32 GiB disk. small.metal offers 16/32/300 -> min(3, 3, 9) = 3 slots,
    // 2 hosts = 2 USD; big.metal offers 64/128/1200 -> min(15, 15, 37) = 15 slots, 1 host = 3.5 USD.
    expect(result).toEqual({
      ok: true,
      pools: [
        {
          executionEnvironmentId: 'env-1',
          hostsNeeded: 2,
          instanceType: 'small.metal',
          maxConcurrentSandboxes: 5,
          slotsPerHost: 3,
          steps: [
            { name: 'build', cpu: 4, memoryGiB: 8, diskGiB: 30 },
            { name: 'deploy', cpu: 2, memoryGiB: 4, diskGiB: 10 },
            { name: 'lint', cpu: 1, memoryGiB: 2, diskGiB: 5 },
            { name: 'test-a', cpu: 2, memoryGiB: 4, diskGiB: 10 },
            { name: 'test-b', cpu: 2, memoryGiB: 4, diskGiB: 10 },
          ],
        },
        // Slot 2.25/4.25/12 on small.metal: min(7, 7, 25) = 7 slots.
        {
          executionEnvironmentId: 'env-2',
          hostsNeeded: 1,
          instanceType: 'small.metal',
          maxConcurrentSandboxes: 1,
          slotsPerHost: 7,
          steps: [{ name: 'package', cpu: 2, memoryGiB: 4, diskGiB: 10 }],
        },
      ],
    });
  });

  it('breaks price ties by fewer hosts, then fewer stranded slots, then name', () => {
    const tie = {
      AWS: testCatalogue('AWS', 'r1', [
        { name: 'b-two', vcpu: 20, memoryGiB: 1000, localDiskGiB: 10000, usd: 1 },
        { name: 'a-four', vcpu: 38, memoryGiB: 1000, localDiskGiB: 10000, usd: 2 },
      ]),
    };
    // Slot 4 cpu (3.75 + 0.25); load 8. b-two: 18/4 = 4 slots -> 2 hosts, 2 USD; a-four: 36/4 = 9 -> 1 host, 2 USD.
    const steps = Array.from({ length: 8 }, (_, i) => step(`s${i}`, 'env-1', [], { cpu: 3.75 }));
    const result = planSandboxes({ steps, environments, catalogues: tie, overheads: TEST_OVERHEADS });
    expect(result.ok && result.pools[0]).toMatchObject({ instanceType: 'a-four', hostsNeeded: 1, slotsPerHost: 9 });
  });

  it('names the step and the largest type when a step fits no type, and yields no pool for an unused environment', () => {
    const steps = [step('ok', 'env-1'), step('huge', 'env-1', [], { memoryGiB: 500 })];
    expect(planSandboxes({ steps, environments, catalogues, overheads: TEST_OVERHEADS })).toEqual({
      ok: false,
      problem: { kind: 'fitsNoInstanceType', executionEnvironmentId: 'env-1', steps: ['huge'], largestType: 'big.metal' },
    });
    const plan = planSandboxes({ steps: [step('ok', 'env-1')], environments, catalogues, overheads: TEST_OVERHEADS });
    expect(plan.ok && plan.pools.map((p) => p.executionEnvironmentId)).toEqual(['env-1']);
  });

  it('names the steps that set the slot when each fits alone but their combined slot does not', () => {
    const steps = [step('cpu-heavy', 'env-1', [], { cpu: 60, memoryGiB: 1 }), step('memory-heavy', 'env-1', [], { cpu: 1, memoryGiB: 120 })];
    const narrow = {
      AWS: testCatalogue('AWS', 'r1', [
        { name: 'cpu.metal', vcpu: 66, memoryGiB: 20, localDiskGiB: 1000, usd: 1 },
        { name: 'mem.metal', vcpu: 8, memoryGiB: 136, localDiskGiB: 1000, usd: 1 },
      ]),
    };
    const result = planSandboxes({ steps, environments, catalogues: narrow, overheads: TEST_OVERHEADS });
    expect(result).toMatchObject({ ok: false, problem: { kind: 'fitsNoInstanceType', steps: ['cpu-heavy', 'memory-heavy'] } });
  });

  it('plans with the real catalogues and overheads data files', () => {
    const input: SandboxPlanInput = {
      steps: [step('a', 'aws'), step('b', 'aws'), step('c', 'gcp', ['a'])],
      environments: [
        { id: 'aws', vendor: 'AWS', region: 'eu-central-1' },
        { id: 'gcp', vendor: 'GCP', region: 'europe-west1' },
      ],
      catalogues: { AWS: awsCatalogue as InstanceCatalogue, GCP: gcpCatalogue as InstanceCatalogue },
      overheads,
    };
    const result = planSandboxes(input);
    expect(result.ok).toBe(true);
    // Two small sandboxes: the cheapest host of each catalogue (z1d.metal is the cheapest AWS metal type listed).
    expect(result.ok && result.pools.map((p) => [p.instanceType, p.hostsNeeded, p.maxConcurrentSandboxes])).toEqual([
      ['z1d.metal', 1, 2],
      ['c3-standard-8-lssd', 1, 1],
    ]);
  });

  it('catalogues are well-formed: a source, a date, a priced base region, positive figures, unique names', () => {
    for (const catalogue of [awsCatalogue, gcpCatalogue] as InstanceCatalogue[]) {
      expect(catalogue.source).toMatch(/^https:\/\//);
      expect(catalogue.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(new Set(catalogue.types.map((t) => t.name)).size).toBe(catalogue.types.length);
      for (const type of catalogue.types) {
        expect(['bare-metal', 'nested-virtualization']).toContain(type.microVm);
        expect(Math.min(type.vcpu, type.memoryGiB, type.localDiskGiB)).toBeGreaterThan(0);
        expect(type.hourlyUsd[catalogue.basePriceRegion]).toBeGreaterThan(0);
      }
    }
  });
});
