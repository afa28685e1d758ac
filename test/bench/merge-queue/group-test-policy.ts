import { buildSkippingConflicts, insertInQueueOrder, type Policy } from './policy';
import type { CiRun, World } from './world';

interface Candidate {
  /** The PRs this candidate adds on top of its parent, in queue order. */
  prs: number[];
  sha: string;
  run: CiRun | null;
  state: 'testing' | 'passed' | 'failed';
  /** Built while PRs ahead of it in the queue were tested alone: it lands only once they are judged. */
  afterSuspects: boolean;
  /** The test areas whose tests failed, once it failed. */
  failedAreas?: number[];
  /** With `eager`: the group tests of its own PRs, started once it is the head. */
  search?: Search;
}

/** A failed head's PRs being searched for the culprit by one round of group tests on the base. */
interface Search {
  suspects: number[];
  runs: { members: number[]; run: CiRun | null; failed: boolean | null }[];
}

/** The named culprits, each tested alone on the base while the chain goes on without them. */
interface Confirm {
  alone: { pr: number; run: CiRun | null; outcome: 'testing' | 'failed' | 'passed' | 'conflict'; failures: number }[];
  /** The next head's size when one of them passes alone (not a culprit after all). */
  nextHeadOnMiss: number | null;
}

/**
 * One chain of up to `depth` stacked candidates of `batch` PRs each, in queue order (issue 16's
 * order rule), whose failed head is searched by **one round of group tests** instead of a
 * bisection: its n suspects are numbered 1..n, and run j (of ceil(log2(n + 1)), all at once, each
 * on the base) holds the suspects whose number has bit j set. With one bad PR the runs that fail
 * spell its number; none failing means the head's failure was spurious. The decoded PR is then
 * tested alone on the base while the chain is rebuilt without it; nothing lands until that run
 * answers (the PRs behind it wait, as the order rule says): failing, it is the culprit and is
 * failed; passing (two bad PRs spell a third number), the suspects go back to the front of the
 * queue and the next head holds half of them. A failed candidate behind the head cancels the
 * candidates behind it and is searched once it is the head.
 */
/** With attribution: at most this many suspects are tested alone at once; more are group-tested. */
const MAX_TESTED_ALONE = 8;

export class GroupTestChainPolicy implements Policy {
  readonly name: string;
  private readonly queue: number[] = [];
  private chain: Candidate[] = [];
  private search: Search | null = null;
  private confirm: Confirm | null = null;
  /** The next head's size after a search that could not name one culprit. */
  private nextHead: number | null = null;
  private busy = false;

  constructor(
    private readonly world: World,
    private readonly batch: number,
    private readonly depth: number,
    private readonly eager = false,
    private readonly attributed = false,
    private readonly retryAlone = true,
  ) {
    this.name = `${attributed ? 'attributed' : 'group tests'} b=${batch} d=${depth}${eager ? ' eager' : ''}`;
  }

  violations(): number {
    return 0;
  }

  arrive(n: number): void {
    this.enqueue([n]);
    this.process();
  }

  /** Puts PRs back in queue order. */
  private enqueue(prs: number[]): void {
    for (const n of prs) insertInQueueOrder(this.queue, n);
  }

  /** Drops the candidates from `from` on; their PRs go back to the queue. */
  private unwind(from: number): void {
    const dropped = this.chain.splice(from);
    for (const c of dropped) this.drop(c);
    this.enqueue(dropped.flatMap((c) => c.prs));
  }

  /** Cancels a candidate's runs (its own and its group tests). */
  private drop(c: Candidate): void {
    if (c.run) this.world.cancelCi(c.run);
    for (const r of c.search?.runs ?? []) if (r.run) this.world.cancelCi(r.run);
  }

  private onCandidate(candidate: Candidate, run: CiRun, passed: boolean): void {
    if (candidate.run !== run) return;
    candidate.run = null;
    const at = this.chain.indexOf(candidate);
    if (at < 0) return;
    candidate.state = passed ? 'passed' : 'failed';
    if (!passed) {
      candidate.failedAreas = run.failedAreas;
      // Every candidate behind a failed one holds its PRs: they would fail too.
      this.unwind(at + 1);
      if (this.attributed && !this.search && !this.confirm) this.nameAtOnce(at, run.failedAreas);
    }
    this.process();
  }

  private startSearch(suspects: number[]): Search {
    const w = this.world;
    const bits = Math.ceil(Math.log2(suspects.length + 1));
    const search: Search = { suspects, runs: [] };
    for (let j = 0; j < bits; j++) {
      const members = suspects.filter((_, i) => ((i + 1) >> j) & 1);
      const built = w.build(w.baseSha, members);
      const entry: Search['runs'][number] = { members, run: null, failed: null };
      search.runs.push(entry);
      if (!built.ok) {
        // A subset that does not merge on its own says nothing: read as failing (no PR is blamed on it alone).
        entry.failed = true;
        continue;
      }
      entry.run = w.startCi(built.sha, `probe [${members.join(',')}]`, (r, ok) => {
        if (entry.run !== r) return;
        entry.run = null;
        entry.failed = !ok;
        this.process();
      });
    }
    return search;
  }

  /** Acts on the search once every run is in: the decoded PR is tested alone; none (spurious) or no single culprit puts the suspects back. */
  private decode(search: Search): void {
    this.search = null;
    const pattern = search.runs.reduce((p, r, j) => p | ((r.failed ? 1 : 0) << j), 0);
    if (pattern === 0) {
      this.enqueue(search.suspects);
      return;
    }
    if (pattern > search.suspects.length) {
      this.enqueue(search.suspects);
      this.nextHead = Math.ceil(search.suspects.length / 2);
      return;
    }
    const pr = search.suspects[pattern - 1];
    this.enqueue(search.suspects.filter((n) => n !== pr));
    this.confirmAlone([pr], Math.ceil(search.suspects.length / 2));
  }

  /**
   * Tests each of `prs` alone on the base (all at once) while the chain is rebuilt without them;
   * nothing lands until every answer is in. Those that fail alone are the culprits; if one passes,
   * it was not, and the chain starts again with it back in its place.
   */
  private confirmAlone(prs: number[], nextHeadOnMiss: number | null): void {
    const w = this.world;
    const confirm: Confirm = { alone: [], nextHeadOnMiss };
    this.confirm = confirm;
    for (const pr of prs) {
      const entry: Confirm['alone'][number] = { pr, run: null, outcome: 'testing', failures: 0 };
      confirm.alone.push(entry);
      const built = w.build(w.baseSha, [pr]);
      if (!built.ok) {
        // It no longer merges on the base: back to its author, like any blocked PR.
        entry.outcome = 'conflict';
        w.scheduleFix(pr, () => this.arrive(pr));
        continue;
      }
      const test = () => {
        entry.run = w.startCi(built.sha, `probe [${pr}]`, (r, ok) => {
          if (entry.run !== r) return;
          entry.run = null;
          if (!ok) entry.failures += 1;
          // The flaky budget, as the planner's: a PR is blamed once it has failed alone twice.
          if (!ok && this.retryAlone && entry.failures < 2) test();
          else {
            entry.outcome = ok ? 'passed' : 'failed';
            this.process();
          }
        });
      };
      test();
    }
  }

  /** Once every alone-run is in: fail the culprits; any that passed goes back, and the chain starts again. */
  private settleConfirm(confirm: Confirm): void {
    this.confirm = null;
    for (const c of this.chain) c.afterSuspects = false;
    for (const a of confirm.alone) if (a.outcome === 'failed') this.world.fail(a.pr);
    const cleared = confirm.alone.filter((a) => a.outcome === 'passed').map((a) => a.pr);
    if (cleared.length === 0) return;
    this.unwind(0);
    this.enqueue(cleared);
    this.nextHead = confirm.nextHeadOnMiss;
  }

  /**
   * With attribution, as soon as the candidate at `at` fails (the head or one stacked behind it):
   * its unlanded PRs in a failing test area are the suspects. A few are tested alone at once; the
   * candidates from the first that holds one are dropped and rebuilt without them (those ahead of
   * every suspect stay, and may land). Otherwise the failed candidate waits to be the head.
   */
  private nameAtOnce(at: number, areas: number[]): void {
    const held = this.chain.slice(0, at + 1);
    const named = held.flatMap((c) => c.prs).filter((n) => areas.includes(this.world.pr(n).area));
    if (named.length === 0 || named.length > MAX_TESTED_ALONE) return;
    const first = held.findIndex((c) => c.prs.some((n) => named.includes(n)));
    const dropped = this.chain.splice(first);
    for (const c of dropped) this.drop(c);
    this.enqueue(dropped.flatMap((c) => c.prs).filter((n) => !named.includes(n)));
    this.confirmAlone(named, null);
  }

  /**
   * With attribution: the failed head's suspects are its PRs in a test area whose tests failed. A
   * few are tested alone at once (confirmAlone); none, or many, are searched by group tests.
   */
  private suspectsOf(head: Candidate): void {
    const areas = head.failedAreas ?? [];
    const named = this.attributed ? head.prs.filter((n) => areas.includes(this.world.pr(n).area)) : [];
    if (named.length > 0 && head.search) {
      // Eager group tests of the whole head: the named PRs are searched instead.
      for (const r of head.search.runs) if (r.run) this.world.cancelCi(r.run);
      head.search = undefined;
    }
    if (named.length > 0 && named.length <= MAX_TESTED_ALONE) {
      this.enqueue(head.prs.filter((n) => !named.includes(n)));
      this.confirmAlone(named, null);
      return;
    }
    this.search = head.search ?? this.startSearch(named.length > 0 ? named : head.prs);
    if (named.length > 0) this.enqueue(head.prs.filter((n) => !named.includes(n)));
  }

  private process(): void {
    if (this.busy) return;
    this.busy = true;
    const w = this.world;
    try {
      for (let guard = 0; guard < 10_000; guard++) {
        if (this.search && this.search.runs.every((r) => r.failed !== null)) {
          this.decode(this.search);
          continue;
        }
        if (this.confirm && this.confirm.alone.every((a) => a.outcome !== 'testing')) {
          this.settleConfirm(this.confirm);
          continue;
        }
        // Landing: the deepest passed candidate with nothing failed ahead of it and no suspect
        // waiting ahead of its PRs (candidates built while PRs are tested alone wait for them).
        {
          const blocked = this.chain.findIndex((c) => c.state === 'failed' || (this.confirm !== null && c.afterSuspects));
          const failedAt = blocked;
          const upTo = failedAt < 0 ? this.chain.length : failedAt;
          let deepest = -1;
          for (let i = 0; i < upTo; i++) if (this.chain[i].state === 'passed') deepest = i;
          if (deepest >= 0) {
            w.land(this.chain[deepest].sha, w.baseSha);
            const landed = this.chain.splice(0, deepest + 1);
            for (const c of landed) this.drop(c);
            continue;
          }
        }
        const head = this.chain[0];
        if (this.eager && head && !head.search && head.prs.length > 1) head.search = this.startSearch(head.prs);
        if (head?.state === 'failed' && !this.search && !this.confirm) {
          this.chain.shift();
          this.suspectsOf(head);
          continue;
        }
        break;
      }
      this.fill();
    } finally {
      this.busy = false;
    }
  }

  private fill(): void {
    const w = this.world;
    // While a search runs the chain waits: its next head depends on the answer.
    if (this.search) return;
    while (this.chain.length < this.depth && this.queue.length > 0) {
      if (this.chain.some((c) => c.state === 'failed')) return;
      const parent = this.chain.length ? this.chain[this.chain.length - 1].sha : w.baseSha;
      const size = this.chain.length === 0 && this.nextHead ? this.nextHead : this.batch;
      const built = buildSkippingConflicts(w, parent, this.queue.splice(0, size), (n) => this.arrive(n));
      if (!built) continue;
      const { prs } = built;
      if (this.chain.length === 0) this.nextHead = null;
      const candidate: Candidate = { prs, sha: built.sha, run: null, state: 'testing', afterSuspects: this.confirm !== null };
      this.chain.push(candidate);
      candidate.run = w.startCi(built.sha, `chain [${prs.join(',')}]`, (r, ok) => this.onCandidate(candidate, r, ok));
    }
  }
}
