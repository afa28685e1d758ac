import { buildSkippingConflicts, type Policy } from './policy';
import type { CiRun, World } from './world';

interface Candidate {
  /** The PRs this candidate adds on top of its parent, in queue order. */
  prs: number[];
  sha: string;
  run: CiRun | null;
  state: 'testing' | 'passed' | 'failed';
  /** With `eager`: the group tests of its own PRs, started once it is the head. */
  search?: Search;
}

/** A failed head's PRs being searched for the culprit by one round of group tests on the base. */
interface Search {
  suspects: number[];
  runs: { members: number[]; run: CiRun | null; failed: boolean | null }[];
}

/** The decoded culprit, tested alone on the base while the chain goes on without it. */
interface Confirm {
  pr: number;
  /** The search's suspects, put back in the queue if the culprit passes alone. */
  suspects: number[];
  run: CiRun | null;
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
  ) {
    this.name = `group tests b=${batch} d=${depth}${eager ? ' eager' : ''}`;
  }

  violations(): number {
    return 0;
  }

  arrive(n: number): void {
    this.enqueue([n]);
    this.process();
  }

  /** Puts PRs back in queue order (a PR back from its author's fix goes before every later arrival). */
  private enqueue(prs: number[]): void {
    for (const n of prs) {
      const at = this.queue.findIndex((m) => m > n);
      this.queue.splice(at < 0 ? this.queue.length : at, 0, n);
    }
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
    // Every candidate behind a failed one holds its PRs: they would fail too.
    if (!passed) this.unwind(at + 1);
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

  /** The search's answer once every run is in: the decoded PR, none (spurious), or undefined (no single culprit). */
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
    const w = this.world;
    const built = w.build(w.baseSha, [pr]);
    if (!built.ok) {
      this.enqueue(search.suspects);
      this.nextHead = Math.ceil(search.suspects.length / 2);
      return;
    }
    const confirm: Confirm = { pr, suspects: search.suspects, run: null };
    this.confirm = confirm;
    this.enqueue(search.suspects.filter((n) => n !== pr));
    confirm.run = w.startCi(built.sha, `probe [${pr}]`, (r, ok) => {
      if (confirm.run !== r) return;
      confirm.run = null;
      this.confirm = null;
      if (!ok) w.fail(pr);
      else {
        // Not the culprit alone: start again from the whole set, half of it first.
        this.unwind(0);
        this.enqueue([pr]);
        this.nextHead = Math.ceil(confirm.suspects.length / 2);
      }
      this.process();
    });
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
        // Landing: the deepest passed candidate with nothing failed ahead of it, once no suspect waits.
        if (!this.confirm) {
          const failedAt = this.chain.findIndex((c) => c.state === 'failed');
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
          this.search = head.search ?? this.startSearch(head.prs);
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
      const candidate: Candidate = { prs, sha: built.sha, run: null, state: 'testing' };
      this.chain.push(candidate);
      candidate.run = w.startCi(built.sha, `chain [${prs.join(',')}]`, (r, ok) => this.onCandidate(candidate, r, ok));
    }
  }
}
