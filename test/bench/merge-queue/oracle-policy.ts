import { searchRunsCharged } from './bounds';
import { buildSkippingConflicts, insertInQueueOrder, type Policy } from './policy';
import { keyedUniform } from './prng';
import type { CiRun, World } from './world';

/**
 * How the oracle learns a failed batch's culprits: `free` at once; `run` after one run of the
 * failed batch on the base (the least one round of search costs); `charged` after the search is
 * charged its information cost (bounds.ts, `searchRunsCharged`): as many CI runs as the fewest
 * pass/fail answers any search needs on average for that culprit set, run at once on the runners.
 */
export type OracleSearch = 'free' | 'run' | 'charged';

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
 * (`bound.ts` sweeps the sizes). With `search` the culprits cost a search the chain waits for
 * (OracleSearch; `charged` is the charged search bound, bounds.ts and bounds-sweep.ts). A culprit
 * is a bad PR or the later PR of a bad pair whose earlier PR the candidate holds (World.culpritsOf);
 * the latter leaves the queue and is failed once its partner lands.
 */
export class OracleChainPolicy implements Policy {
  readonly name: string;
  private readonly queue: number[] = [];
  private chain: Candidate[] = [];
  private busy = false;
  /** The runs that stand for the search (`run`, `charged`), while the chain waits for them. */
  private searching = new Set<CiRun>();
  /** What each search in progress names once the last search run has finished. */
  private pendingNames: Array<() => void> = [];
  /** Later PRs of bad pairs found while their earlier partner has not landed (World.isCulprit). */
  private readonly parked = new Set<number>();
  /** Charged search runs started (diagnostics). */
  chargedRuns = 0;
  private readonly search: OracleSearch;

  /**
   * `search` (see OracleSearch; `true` is `run`): with `run` the culprits are known only once one
   * run of the failed batch's own PRs on the base has finished (one round on one runner), with
   * `charged` once every run the search is charged has finished; the chain waits for them as issue
   * 16's order rule makes a real queue wait. With `free` they are known at once.
   */
  constructor(
    private readonly world: World,
    private readonly batch: number,
    private readonly depth: number,
    search: boolean | OracleSearch = false,
  ) {
    this.search = search === true ? 'run' : search === false ? 'free' : search;
    this.name = `oracle b=${batch} d=${depth}${this.search === 'free' ? '' : this.search === 'run' ? ' one search run' : ' charged search'}`;
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
      // a parked pair member fails once its partner has landed (it is a culprit then)
      for (const n of [...this.parked]) {
        if (!w.isCulprit(n)) continue;
        this.parked.delete(n);
        w.fail(n);
      }
    } else {
      const held = this.chain.slice(0, at + 1);
      const first = held.findIndex((c) => this.culpritsIn(c, held).length > 0);
      if (first < 0) {
        // Spurious: the same candidate again.
        candidate.run = w.startCi(candidate.sha as string, `oracle retry`, (r, ok) => this.onDone(candidate, r, ok));
      } else {
        // `charged` names only the culprits of the batch its search was charged for (the first
        // that holds one); those behind go back to the queue and are found when they fail again.
        const named_ = this.search === 'charged' ? [held[first]] : held;
        const culprits = named_.flatMap((c) => this.culpritsIn(c, held));
        const suspects = held[first].prs;
        this.unwind(first);
        const named = () => {
          for (const n of culprits) {
            // the later PR of a bad pair waits, out of the queue, until its partner lands
            if (w.isCulprit(n)) w.fail(n);
            else this.parked.add(n);
          }
          this.queue.splice(0, this.queue.length, ...this.queue.filter((n) => w.pr(n).failedAt === null && !this.parked.has(n)));
        };
        const shas =
          this.search === 'run'
            ? this.searchRunShas(suspects)
            : this.search === 'charged'
              ? this.chargedShas(suspects, this.culpritsIn(held[first], held))
              : [];
        if (shas.length === 0) named();
        else {
          this.pendingNames.push(named);
          const done = (r: CiRun) => {
            if (!this.searching.delete(r) || this.searching.size > 0) return;
            for (const name of this.pendingNames.splice(0)) name();
            this.process();
          };
          for (const sha of shas) this.searching.add(w.startCi(sha, `probe [${suspects.join(',')}]`, done));
        }
      }
    }
    this.process();
  }

  /**
   * The culprits among the PRs candidate `c` adds (World.culpritsOf): its bad PRs, and the later
   * PR of each bad pair whose earlier PR it holds (landed, or ahead of it in the chain `held`).
   */
  private culpritsIn(c: Candidate, held: readonly Candidate[]): number[] {
    const w = this.world;
    const order = held.flatMap((h) => h.prs);
    const pos = (n: number) => order.indexOf(n);
    return w
      .culpritsOf(c.sha as string)
      .filter((n) => c.prs.includes(n))
      .filter((n) => w.isCulprit(n) || w.pr(n).pairedWith.some((m) => pos(m) >= 0 && pos(m) < pos(n)));
  }

  /** `run`: one run of the failed batch's PRs on the base (none when they no longer build there). */
  private searchRunShas(suspects: readonly number[]): string[] {
    const built = this.world.build(this.world.baseSha, suspects);
    return built.ok ? [built.sha] : [];
  }

  /**
   * `charged`: the runs a pass/fail search of this batch is charged (bounds.ts). Each is a run of
   * the base and one suspect, a PR that is not slow where the batch has one (a lone PR on the base
   * is the cheapest run the world has, so the charge in runner time is a lower bound too), or of
   * the base alone when no suspect builds there.
   */
  private chargedShas(suspects: readonly number[], culprits: readonly number[]): string[] {
    const w = this.world;
    const u = keyedUniform([w.seed, 11, this.chargedRuns, ...culprits]);
    const runs = searchRunsCharged(suspects.length, culprits.length, w.scenario.badRate, w.scenario.flakeRate, u, true);
    this.chargedRuns += runs;
    const order = [...suspects.filter((n) => !w.pr(n).slow), ...suspects.filter((n) => w.pr(n).slow)];
    let sha = w.baseSha;
    for (const n of order) {
      const built = w.build(w.baseSha, [n]);
      if (built.ok) {
        sha = built.sha;
        break;
      }
    }
    return Array.from({ length: runs }, () => sha);
  }

  private process(): void {
    if (this.busy) return;
    this.busy = true;
    const w = this.world;
    try {
      while (this.searching.size === 0 && this.chain.length < this.depth && this.queue.length > 0) {
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
