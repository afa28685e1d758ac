import type { InstanceCatalogue, PlanEnvironment, PlanStep, SandboxOverheads } from '@/modules/pipelines/sandbox-plan';

import { mulberry32 } from '../../bench/merge-queue/prng';

/** Seeded so that generated pipelines are reproducible (the simulator's generator). */
export const prng = mulberry32;

export interface PipelineShape {
  steps: number;
  environments: number;
  /** Extra random forward edges per step, on top of the stage structure. */
  randomEdgesPerStep: number;
  seed: number;
}

/**
 * A realistic pipeline: stages of fan-out (each stage's steps depend on a few steps of the previous
 * stage), periodic fan-in gates (one step depending on a whole stage), plus random forward edges to
 * earlier steps, spread over several environments, with parallelism mostly 1 and sometimes more.
 */
export function generatePipeline(shape: PipelineShape): { steps: PlanStep[]; environments: PlanEnvironment[] } {
  const random = prng(shape.seed);
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const environments: PlanEnvironment[] = Array.from({ length: shape.environments }, (_, i) => ({
    id: `env-${i}`,
    vendor: i % 2 === 0 ? 'AWS' : 'GCP',
    region: i % 2 === 0 ? 'us-east-1' : 'us-central1',
  }));
  const steps: PlanStep[] = [];
  let previousStage: number[] = [];
  while (steps.length < shape.steps) {
    const gate = previousStage.length > 1 && random() < 0.25;
    const width = gate ? 1 : Math.min(shape.steps - steps.length, int(5, 60));
    const stage: number[] = [];
    for (let k = 0; k < width && steps.length < shape.steps; k++) {
      const i = steps.length;
      const deps = new Set<number>();
      if (gate) previousStage.forEach((p) => deps.add(p));
      else if (previousStage.length) for (let d = int(1, 3); d > 0; d--) deps.add(previousStage[int(0, previousStage.length - 1)]);
      for (let r = 0; r < shape.randomEdgesPerStep; r++) if (i > 0 && random() < 0.5) deps.add(int(0, i - 1));
      steps.push({
        name: `step-${i}`,
        executionEnvironmentId: environments[int(0, environments.length - 1)].id,
        cpu: [0.5, 1, 2, 4, 8][int(0, 4)],
        memoryGiB: [1, 2, 4, 8, 16][int(0, 4)],
        diskGiB: [5, 10, 20, 50][int(0, 3)],
        dependsOn: [...deps].map((d) => `step-${d}`),
        parallelism: random() < 0.8 ? 1 : int(2, 8),
      });
      stage.push(i);
    }
    previousStage = stage;
  }
  return { steps, environments };
}

export const TEST_OVERHEADS: SandboxOverheads = {
  microVm: { cpu: 0.25, memoryGiB: 0.25, diskGiB: 2 },
  hostReservation: { cpu: 2, memoryGiB: 8, diskGiB: 100 },
};

/** A made-up catalogue for property tests (the real ones are checked separately). */
export function testCatalogue(
  vendor: string,
  region: string,
  types: { name: string; vcpu: number; memoryGiB: number; localDiskGiB: number; usd: number }[],
): InstanceCatalogue {
  return {
    vendor,
    source: 'test',
    asOf: '2025-01-01',
    basePriceRegion: region,
    types: types.map((t) => ({
      name: t.name,
      vcpu: t.vcpu,
      memoryGiB: t.memoryGiB,
      localDiskGiB: t.localDiskGiB,
      microVm: 'bare-metal' as const,
      regions: [region],
      hourlyUsd: { [region]: t.usd },
    })),
  };
}
