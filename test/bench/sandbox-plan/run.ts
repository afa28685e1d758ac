/*
 * npm run bench:sandbox-plan [-- --sizes 100,1000,5000 --environments 4 --runs 31 --seed 7]
 *
 * Times the pure sandbox-plan calculator (no Nest, no database) on generated pipelines of realistic
 * shape: stages of fan-out, fan-in gates and random forward edges, spread over several environments
 * of two vendors, with the real catalogues and overheads. Prints the median and p90 time per plan,
 * the memory one plan allocates, and how time grows with size (the exponent k of time ~ size^k
 * between consecutive sizes). Targets: 1,000 steps under 20 ms, 5,000 under 100 ms.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import awsCatalogue from '@/modules/execution-environments/vendors/aws.catalogue.json';
import gcpCatalogue from '@/modules/execution-environments/vendors/gcp.catalogue.json';
import { planSandboxes, type InstanceCatalogue, type SandboxPlanInput } from '@/modules/pipelines/sandbox-plan';
import overheads from '@/modules/pipelines/sandbox-plan/sandbox-overheads.json';
import { generatePipeline } from '../../support/sandbox-plan/generators';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const SIZES = (arg('sizes') ?? '100,1000,5000').split(',').map(Number);
const ENVIRONMENTS = Number(arg('environments') ?? 4);
const RUNS = Number(arg('runs') ?? 31);
const SEED = Number(arg('seed') ?? 7);
const TARGET_MS: Record<number, number> = { 1000: 20, 5000: 100 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function inputOf(size: number, seed: number): SandboxPlanInput {
  const { steps, environments } = generatePipeline({ steps: size, environments: ENVIRONMENTS, randomEdgesPerStep: 1, seed });
  const regions = { AWS: 'us-east-1', GCP: 'us-central1' } as const;
  return {
    steps,
    environments: environments.map((e) => ({ ...e, region: regions[e.vendor as 'AWS' | 'GCP'] })),
    catalogues: { AWS: awsCatalogue as InstanceCatalogue, GCP: gcpCatalogue as InstanceCatalogue },
    overheads,
  };
}

interface Row {
  size: number;
  edges: number;
  pools: number;
  median: number;
  p90: number;
  allocatedMiB: number;
}

function measure(size: number): Row {
  const inputs = Array.from({ length: 3 }, (_, i) => inputOf(size, SEED + i));
  for (let i = 0; i < 5; i++) planSandboxes(inputs[i % inputs.length]); // warm-up: JIT
  const times: number[] = [];
  let pools = 0;
  for (let r = 0; r < RUNS; r++) {
    const input = inputs[r % inputs.length];
    const started = performance.now();
    const result = planSandboxes(input);
    times.push(performance.now() - started);
    if (!result.ok) throw new Error(`no plan at size ${size}: ${JSON.stringify(result.problem)}`);
    pools = result.pools.length;
  }
  times.sort((a, b) => a - b);
  // Memory one plan allocates: heap + array buffers after one call, from a collected heap (an upper
  // bound of its peak as long as no collection runs during the call, which the young generation's size ensures here).
  let allocated = 0;
  for (const input of inputs) {
    gc();
    const before = process.memoryUsage();
    planSandboxes(input);
    const after = process.memoryUsage();
    allocated = Math.max(allocated, after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers);
  }
  const edges = inputs[0].steps.reduce((sum, s) => sum + (s.dependsOn?.length ?? 0), 0);
  return { size, edges, pools, median: quantile(times, 0.5), p90: quantile(times, 0.9), allocatedMiB: allocated / 2 ** 20 };
}

function main(): void {
  console.log(
    `# Sandbox-plan calculator: ${RUNS} runs per size over 3 generated pipelines (seeds ${SEED}..${SEED + 2}), ${ENVIRONMENTS} environments (AWS + GCP), node ${process.version}`,
  );
  const rows = SIZES.map(measure);
  console.log('| steps | dependency edges | pools | median ms | p90 ms | allocated per plan MiB | growth k (time ~ steps^k) | target |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---|');
  rows.forEach((row, i) => {
    const growth = i === 0 ? '' : (Math.log(row.median / rows[i - 1].median) / Math.log(row.size / rows[i - 1].size)).toFixed(2);
    const target = TARGET_MS[row.size];
    const verdict = target === undefined ? '' : `< ${target} ms: ${row.median < target ? 'met' : 'MISSED'}`;
    console.log(
      `| ${row.size} | ${row.edges} | ${row.pools} | ${row.median.toFixed(2)} | ${row.p90.toFixed(2)} | ${row.allocatedMiB.toFixed(2)} | ${growth} | ${verdict} |`,
    );
  });
  console.log(`peak RSS of the whole run: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  const missed = rows.filter((r) => TARGET_MS[r.size] !== undefined && r.median >= TARGET_MS[r.size]);
  if (missed.length) process.exitCode = 1;
}

main();
