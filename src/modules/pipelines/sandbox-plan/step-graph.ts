import type { PlanStep, StepGraphProblem } from './sandbox-plan.types';

/**
 * The dependency order of a version's steps in compressed form: step i is the i-th input step,
 * and `successors[successorStart[i] .. successorStart[i + 1])` are the steps that depend on it.
 */
export interface StepGraph {
  readonly size: number;
  readonly successorStart: Int32Array;
  readonly successors: Int32Array;
  readonly edgeCount: number;
}

export type StepGraphResult = { ok: true; graph: StepGraph } | { ok: false; problem: StepGraphProblem };

/**
 * Builds the dependency graph and checks the rules of a version: unique step names, `dependsOn`
 * naming steps of the same version, no cycle. On a cycle, the problem lists the steps of one cycle
 * in dependency order. O(steps + edges), iterative (a 5,000-step chain does not touch the stack).
 */
export function buildStepGraph(steps: readonly PlanStep[]): StepGraphResult {
  const n = steps.length;
  const index = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const name = steps[i].name;
    if (index.has(name)) return { ok: false, problem: { kind: 'duplicateStepName', steps: [name] } };
    index.set(name, i);
  }
  const degree = new Int32Array(n + 1);
  let edgeCount = 0;
  for (let v = 0; v < n; v++) {
    for (const dep of steps[v].dependsOn ?? []) {
      const u = index.get(dep);
      if (u === undefined) return { ok: false, problem: { kind: 'unknownDependency', step: steps[v].name, dependsOn: dep } };
      degree[u + 1]++;
      edgeCount++;
    }
  }
  const successorStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) successorStart[i + 1] = successorStart[i] + degree[i + 1];
  const fill = successorStart.slice(0, n);
  const successors = new Int32Array(edgeCount);
  for (let v = 0; v < n; v++) for (const dep of steps[v].dependsOn ?? []) successors[fill[index.get(dep) as number]++] = v;
  const graph: StepGraph = { size: n, successorStart, successors, edgeCount };
  const cycle = findCycle(graph);
  if (cycle) return { ok: false, problem: { kind: 'cycle', steps: cycle.map((i) => steps[i].name) } };
  return { ok: true, graph };
}

/** One cycle as step indices in dependency order, or undefined for a DAG (iterative three-colour DFS). */
function findCycle(graph: StepGraph): number[] | undefined {
  const { size, successorStart, successors } = graph;
  const colour = new Uint8Array(size); // 0 unseen, 1 on the stack, 2 done
  const stack = new Int32Array(size);
  const cursor = new Int32Array(size);
  for (let root = 0; root < size; root++) {
    if (colour[root] !== 0) continue;
    let depth = 0;
    stack[0] = root;
    colour[root] = 1;
    cursor[root] = successorStart[root];
    while (depth >= 0) {
      const u = stack[depth];
      if (cursor[u] < successorStart[u + 1]) {
        const v = successors[cursor[u]++];
        if (colour[v] === 1) {
          const from = stack.lastIndexOf(v, depth);
          return Array.from(stack.subarray(from, depth + 1));
        }
        if (colour[v] === 0) {
          colour[v] = 1;
          cursor[v] = successorStart[v];
          stack[++depth] = v;
        }
      } else {
        colour[u] = 2;
        depth--;
      }
    }
  }
  return undefined;
}
