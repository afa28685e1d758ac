import type { StepGraph } from './step-graph';

/** Residual capacity standing for "unbounded": above any total weight a version can carry (5,000 steps x parallelism 1,000). */
const UNBOUNDED = 1 << 30;

export interface MaxAntichain {
  /** The largest total weight of pairwise independent marked steps. */
  readonly weight: number;
  /** One antichain of that weight (indices of marked steps), recovered from the minimum cut. */
  readonly steps: number[];
}

/**
 * Maximum-weight antichain of the marked steps of a DAG, where two steps are comparable when one
 * reaches the other through steps of any kind (marked or not).
 *
 * Weighted Dilworth as a minimum flow with lower bounds, on the dependency graph itself (no
 * transitive closure): each marked step v becomes v_in -> v_out with lower bound w(v), each
 * dependency u -> v an unbounded arc u_out -> v_in, a source feeds every v_in and every v_out
 * drains into a sink. A flow is a cover of the weights by chains, and by the min-flow max-cut
 * theorem the smallest cover equals the heaviest antichain. Unmarked steps carry no lower bound,
 * so their in/out halves are one node: chains pass through them, which is what makes
 * comparability transitive through other environments' steps.
 *
 * Computation: start from the feasible flow that gives every marked step its own chain
 * (value W = sum of weights), then cancel as much as possible by a maximum flow from the sink back
 * to the source in the residual network (Dinic; each augmenting path joins the end of one chain to
 * the start of another). The answer is W minus that flow. The antichain is read off the cut: marked
 * steps whose out-half is reachable from the sink in the final residual network and whose in-half
 * is not. Since unbounded arcs never saturate, that set is closed under "reaches", so no two of its
 * steps are comparable.
 *
 * Cost: O(n + m) memory; Dinic's O(V^2 E) worst case on V = n + marked + 2 nodes and
 * E = m + 3 x marked arcs, far less in practice (see npm run bench:sandbox-plan).
 */
export function maxWeightAntichain(graph: StepGraph, weightOf: ArrayLike<number>): MaxAntichain {
  const n = graph.size;
  // Node numbering: 0 = source, 1 = sink, then one node per step (its in-half), then one out-half per marked step.
  const inNode = new Int32Array(n);
  const outNode = new Int32Array(n);
  let nodes = 2 + n;
  let marked = 0;
  let total = 0;
  for (let v = 0; v < n; v++) {
    inNode[v] = 2 + v;
    if (weightOf[v] > 0) {
      outNode[v] = nodes++;
      marked++;
      total += weightOf[v];
    } else {
      outNode[v] = inNode[v];
    }
  }
  if (marked === 0) return { weight: 0, steps: [] };

  // Residual network of the single-chain flow, oriented for the sink -> source reduction:
  //   sink -> v_out (w), v_in -> source (w), v_in -> v_out (unbounded; its reverse is the slack above w),
  //   u_out -> v_in (unbounded) for every dependency. Each arc is stored with its reverse.
  const arcCount = graph.edgeCount + 3 * marked;
  const from = new Int32Array(arcCount);
  const to = new Int32Array(arcCount);
  const capacity = new Int32Array(arcCount);
  let a = 0;
  const { successorStart, successors } = graph;
  for (let u = 0; u < n; u++) {
    for (let e = successorStart[u]; e < successorStart[u + 1]; e++) {
      from[a] = outNode[u];
      to[a] = inNode[successors[e]];
      capacity[a++] = UNBOUNDED;
    }
    if (weightOf[u] > 0) {
      from[a] = 1;
      to[a] = outNode[u];
      capacity[a++] = weightOf[u];
      from[a] = inNode[u];
      to[a] = 0;
      capacity[a++] = weightOf[u];
      from[a] = inNode[u];
      to[a] = outNode[u];
      capacity[a++] = UNBOUNDED;
    }
  }
  const network = FlowNetwork.fromArcs(nodes, from, to, capacity);
  const reduction = network.maxFlow(1, 0);
  const reachable = network.reachableFrom(1);
  const steps: number[] = [];
  for (let v = 0; v < n; v++) if (weightOf[v] > 0 && reachable[outNode[v]] === 1 && reachable[inNode[v]] === 0) steps.push(v);
  return { weight: total - reduction, steps };
}

/** A residual network in compressed adjacency form: arc e and its reverse `partner[e]`. */
class FlowNetwork {
  private constructor(
    private readonly nodeCount: number,
    private readonly start: Int32Array,
    private readonly head: Int32Array,
    private readonly capacity: Int32Array,
    private readonly partner: Int32Array,
  ) {}

  static fromArcs(nodeCount: number, from: Int32Array, to: Int32Array, capacity: Int32Array): FlowNetwork {
    const m = from.length;
    const start = new Int32Array(nodeCount + 1);
    for (let i = 0; i < m; i++) {
      start[from[i] + 1]++;
      start[to[i] + 1]++;
    }
    for (let v = 0; v < nodeCount; v++) start[v + 1] += start[v];
    const fill = start.slice(0, nodeCount);
    const head = new Int32Array(2 * m);
    const cap = new Int32Array(2 * m);
    const partner = new Int32Array(2 * m);
    for (let i = 0; i < m; i++) {
      const p = fill[from[i]]++;
      const q = fill[to[i]]++;
      head[p] = to[i];
      cap[p] = capacity[i];
      partner[p] = q;
      head[q] = from[i];
      cap[q] = 0;
      partner[q] = p;
    }
    return new FlowNetwork(nodeCount, start, head, cap, partner);
  }

  /** Dinic: BFS levels, then blocking flow by an iterative DFS with current-arc pointers. */
  maxFlow(source: number, sink: number): number {
    const { nodeCount, start, head, capacity, partner } = this;
    const level = new Int32Array(nodeCount);
    const queue = new Int32Array(nodeCount);
    const current = new Int32Array(nodeCount);
    const path = new Int32Array(nodeCount);
    let flow = 0;
    for (;;) {
      level.fill(-1);
      level[source] = 0;
      let qHead = 0;
      let qTail = 0;
      queue[qTail++] = source;
      while (qHead < qTail && level[sink] < 0) {
        const u = queue[qHead++];
        for (let e = start[u]; e < start[u + 1]; e++) {
          const v = head[e];
          if (capacity[e] > 0 && level[v] < 0) {
            level[v] = level[u] + 1;
            queue[qTail++] = v;
          }
        }
      }
      if (level[sink] < 0) return flow;
      current.set(start.subarray(0, nodeCount));
      let depth = 0;
      let u = source;
      for (;;) {
        if (u === sink) {
          let bottleneck = UNBOUNDED;
          let at = 0;
          for (let d = 0; d < depth; d++) {
            if (capacity[path[d]] < bottleneck) {
              bottleneck = capacity[path[d]];
              at = d;
            }
          }
          for (let d = 0; d < depth; d++) {
            capacity[path[d]] -= bottleneck;
            capacity[partner[path[d]]] += bottleneck;
          }
          flow += bottleneck;
          depth = at;
          u = at === 0 ? source : head[path[at - 1]];
          continue;
        }
        let advanced = false;
        const end = start[u + 1];
        const next = level[u] + 1;
        for (let e = current[u]; e < end; e++) {
          const v = head[e];
          if (capacity[e] > 0 && level[v] === next && (v === sink || level[v] < level[sink])) {
            current[u] = e;
            path[depth++] = e;
            u = v;
            advanced = true;
            break;
          }
        }
        if (advanced) continue;
        current[u] = end;
        if (depth === 0) break;
        level[u] = -1;
        depth--;
        u = head[partner[path[depth]]];
        current[u]++;
      }
    }
  }

  /** 1 for every node reachable from `origin` through arcs with residual capacity. */
  reachableFrom(origin: number): Uint8Array {
    const seen = new Uint8Array(this.nodeCount);
    const queue = new Int32Array(this.nodeCount);
    let qHead = 0;
    let qTail = 0;
    seen[origin] = 1;
    queue[qTail++] = origin;
    while (qHead < qTail) {
      const u = queue[qHead++];
      for (let e = this.start[u]; e < this.start[u + 1]; e++) {
        if (this.capacity[e] > 0 && seen[this.head[e]] === 0) {
          seen[this.head[e]] = 1;
          queue[qTail++] = this.head[e];
        }
      }
    }
    return seen;
  }
}
