import { buildSkippingConflicts, insertInQueueOrder, type Policy } from './policy';
import type { CiRun, World } from './world';

interface Candidate {
  /** The PRs this candidate adds on top of its parent, in queue order. */
  prs: number[];
  sha: string | null;
  run: CiRun | null;
}

/**
 * A bound, not a planner: one chain of up to `depth` stacked candidates of `batch` PRs each (the
 * k-th holds everything ahead of it, as a speculative merge queue builds them), kept in queue
 * order, with **culprit-finding for free**. When a candidate fails, the bad PRs among those it
 * holds are known at once (no bisection runs, no waiting): they fail, the candidates from the first
 * one that held a culprit are rebuilt without them. A failure with no bad PR (spurious) reruns
 * that candidate. A passing candidate lands everything it holds. Every other cost is the model's:
 * runners, CI time (slow PRs slow every candidate stacked on them until they land), spurious
 * failures, conflicts and the authors' fixes. No real queue can find culprits for free, so a real
 * one-chain planner with these batch sizes does no better than this on the same world
 * (`bound.ts` sweeps the sizes).
 */
export class OracleChainPolicy implements Policy {
  readonly name: string;
  private readonly queue: number[] = [];
  private chain: Candidate[] = [];
  private busy = false;
  /** With `searchRun`: the run that stands for the search, while the chain waits for it. */
  private searching: CiRun | null = null;

  /**
   * `searchRun`: the culprits are known only once one run of the failed batch's own PRs on the
   * base has finished (the least a search the chain waits for costs: one round, on a runner), and the chain waits
   * for it as issue 16's order rule makes a real queue wait; without it they are known at once.
   */
  constructor(
    private readonly world: World,
    private readonly batch: number,
    private readonly depth: number,
    private readonly searchRun = false,
  ) {
    this.name = `oracle b=${batch} d=${depth}${searchRun ? ' one search run' : ''}`;
  }

  violations(): number {
    return 0;
  }

  arrive(n: number): void {
    insertInQueueOrder(this.queue, n);
    this.process();
  }

  /** Drops the candidates from `from` on; their PRs go back to the front of the queue, in order. */
  private unwind(from: number): void {
    const dropped = this.chain.splice(from);
    for (const c of dropped) if (c.run) this.world.cancelCi(c.run);
    this.queue.unshift(...dropped.flatMap((c) => c.prs));
  }

  private onDone(candidate: Candidate, run: CiRun, passed: boolean): void {
    if (candidate.run !== run) return;
    candidate.run = null;
    const w = this.world;
    const at = this.chain.indexOf(candidate);
    if (at < 0) return;
    if (passed) {
      // It holds every PR ahead of it: all of them land with it.
      w.land(candidate.sha as string, w.baseSha);
      const landed = this.chain.splice(0, at + 1);
      for (const c of landed.slice(0, -1)) if (c.run) w.cancelCi(c.run);
    } else {
      const held = this.chain.slice(0, at + 1);
      const first = held.findIndex((c) => c.prs.some((n) => w.pr(n).bad));
      if (first < 0) {
        // Spurious: the same candidate again.
        candidate.run = w.startCi(candidate.sha as string, `oracle retry`, (r, ok) => this.onDone(candidate, r, ok));
      } else {
        const culprits = held.flatMap((c) => c.prs.filter((n) => w.pr(n).bad));
        const suspects = held[first].prs;
        this.unwind(first);
        const named = () => {
          for (const n of culprits) w.fail(n);
          this.queue.splice(0, this.queue.length, ...this.queue.filter((n) => w.pr(n).failedAt === null));
        };
        const built = this.searchRun ? w.build(w.baseSha, suspects) : undefined;
        if (!built?.ok) named();
        else {
          const search = w.startCi(built.sha, `probe [${suspects.join(',')}]`, (r) => {
            if (this.searching !== r) return;
            this.searching = null;
            named();
            this.process();
          });
          this.searching = search;
        }
      }
    }
    this.process();
  }

  private process(): void {
    if (this.busy) return;
    this.busy = true;
    const w = this.world;
    try {
      while (!this.searching && this.chain.length < this.depth && this.queue.length > 0) {
        const parent = this.chain.length ? (this.chain[this.chain.length - 1].sha as string) : w.baseSha;
        const built = buildSkippingConflicts(w, parent, this.queue.splice(0, this.batch), (n) => this.arrive(n));
        if (!built) continue;
        const { prs } = built;
        const candidate: Candidate = { prs, sha: built.sha, run: null };
        this.chain.push(candidate);
        candidate.run = w.startCi(built.sha, `oracle [${prs.join(',')}]`, (r, ok) => this.onDone(candidate, r, ok));
      }
    } finally {
      this.busy = false;
    }
  }
}
