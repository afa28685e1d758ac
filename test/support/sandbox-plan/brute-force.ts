import type { PlanStep } from '@/modules/pipelines/sandbox-plan';

/** reach[i][j]: step j depends on step i, transitively. Plain DFS per step: for small graphs only. */
export function reachability(steps: readonly PlanStep[]): boolean[][] {
  const index = new Map(steps.map((s, i) => [s.name, i]));
  const successors: number[][] = steps.map(() => []);
  steps.forEach((s, v) => (s.dependsOn ?? []).forEach((d) => successors[index.get(d)!].push(v)));
  return steps.map((_, i) => {
    const seen = steps.map(() => false);
    const stack = [...successors[i]];
    while (stack.length) {
      const v = stack.pop()!;
      if (seen[v]) continue;
      seen[v] = true;
      stack.push(...successors[v]);
    }
    return seen;
  });
}

/** The maximum-weight antichain among the steps of `environmentId`, by trying every subset (<= ~16 steps). */
export function bruteForceMaxConcurrent(steps: readonly PlanStep[], environmentId: string): number {
  const reach = reachability(steps);
  const pool = steps.map((s, i) => i).filter((i) => steps[i].executionEnvironmentId === environmentId);
  let best = 0;
  for (let mask = 1; mask < 1 << pool.length; mask++) {
    const chosen = pool.filter((_, b) => mask & (1 << b));
    let ok = true;
    let weight = 0;
    for (const a of chosen) {
      weight += steps[a].parallelism ?? 1;
      for (const b of chosen) if (reach[a][b]) ok = false;
    }
    if (ok && weight > best) best = weight;
  }
  return best;
}
