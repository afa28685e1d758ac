import { buildSkippingConflicts, type Policy } from './policy';
import type { CiRun, World } from './world';

/** One PR at a time on the base: build, test, land or fail. */
export class SequentialPolicy implements Policy {
  readonly name = 'sequential';
  private readonly queue: number[] = [];
  private busy = false;

  constructor(private readonly world: World) {}

  violations(): number {
    return 0;
  }

  arrive(n: number): void {
    this.queue.push(n);
    this.pump();
  }

  private pump(): void {
    const w = this.world;
    while (!this.busy && this.queue.length > 0) {
      const n = this.queue.shift() as number;
      const base = w.baseSha;
      const built = w.build(base, [n]);
      if (!built.ok) {
        w.scheduleFix(n, () => this.arrive(n));
        continue;
      }
      this.busy = true;
      w.startCi(built.sha, `#${n}`, (_run, passed) => {
        this.busy = false;
        if (passed) w.land(built.sha, base);
        else w.fail(n);
        this.pump();
      });
    }
  }
}

interface Item {
  pr: number;
  sha: string | null;
  run: CiRun | null;
  result: 'pending' | 'passed' | 'failed';
  /** Zuul: failed while something ahead was still testing; items behind are built without it. */
  failing: boolean;
}

/**
 * Cumulative speculation, one PR per candidate (candidate k = base + PRs 1..k), with a window of
 * candidates under test. `github`: fixed window (GitHub's default of 5 PRs to build); a failure is
 * judged when the PR reaches the head, then that PR is removed and everything behind is rebuilt.
 * `zuul`: a dependent pipeline with an adaptive window (start 20, floor 3, +1 per merge, halved per
 * failure); a candidate that fails behind a pending one is assumed guilty and the items behind it
 * are rebuilt without it at once, as Zuul does.
 */
export class SpeculativePolicy implements Policy {
  readonly name: string;
  private readonly queue: number[] = [];
  private items: Item[] = [];
  private window: number;
  private busy = false;

  constructor(
    private readonly world: World,
    private readonly flavour: 'github' | 'zuul',
  ) {
    this.name = flavour === 'github' ? 'github' : 'zuul';
    this.window = flavour === 'github' ? 5 : 20;
  }

  violations(): number {
    return 0;
  }

  arrive(n: number): void {
    this.queue.push(n);
    this.process();
  }

  private reset(from: number): void {
    for (let i = from; i < this.items.length; i++) {
      const item = this.items[i];
      if (item.run) this.world.cancelCi(item.run);
      item.sha = null;
      item.run = null;
      item.result = 'pending';
      item.failing = false;
    }
  }

  private process(): void {
    if (this.busy) return;
    this.busy = true;
    const w = this.world;
    try {
      for (let guard = 0; guard < 100_000; guard++) {
        const head = this.items[0];
        if (head && head.result === 'passed' && head.sha) {
          w.land(head.sha, w.baseSha);
          this.items.shift();
          if (this.flavour === 'zuul') this.window += 1;
          continue;
        }
        if (head && head.result === 'failed') {
          w.fail(head.pr);
          this.items.shift();
          if (this.flavour === 'zuul') this.window = Math.max(3, Math.floor(this.window / 2));
          if (!head.failing) this.reset(0);
          continue;
        }
        break;
      }
      while (this.items.length < this.window && this.queue.length > 0) {
        this.items.push({ pr: this.queue.shift() as number, sha: null, run: null, result: 'pending', failing: false });
      }
      this.build();
    } finally {
      this.busy = false;
    }
  }

  private build(): void {
    const w = this.world;
    for (let i = 0; i < this.items.length; i++) {
      const item = this.items[i];
      if (item.sha !== null) continue;
      let parent = w.baseSha;
      for (let j = i - 1; j >= 0; j--) {
        if (!this.items[j].failing) {
          parent = this.items[j].sha as string;
          break;
        }
      }
      const built = w.build(parent, [item.pr]);
      if (!built.ok) {
        this.items.splice(i, 1);
        i -= 1;
        w.scheduleFix(item.pr, () => this.arrive(item.pr));
        continue;
      }
      item.sha = built.sha;
      item.run = w.startCi(built.sha, `#${item.pr}`, (run, passed) => {
        if (item.run !== run) return;
        item.run = null;
        item.result = passed ? 'passed' : 'failed';
        if (!passed && this.flavour === 'zuul' && this.items[0] !== item) {
          item.failing = true;
          this.reset(this.items.indexOf(item) + 1);
        }
        this.process();
      });
    }
  }
}

/** bors-style: one batch at a time holding everything queued; a failed batch is halved and each half retried in turn. */
export class BorsPolicy implements Policy {
  readonly name = 'bors';
  private readonly queue: number[] = [];
  private readonly splits: number[][] = [];
  private busy = false;

  constructor(
    private readonly world: World,
    private readonly maxBatch = 64,
  ) {}

  violations(): number {
    return 0;
  }

  arrive(n: number): void {
    this.queue.push(n);
    this.pump();
  }

  private pump(): void {
    const w = this.world;
    while (!this.busy) {
      const batch = this.splits.shift() ?? this.queue.splice(0, this.maxBatch);
      if (batch.length === 0) return;
      const base = w.baseSha;
      const built = buildSkippingConflicts(w, base, batch, (n) => this.arrive(n));
      if (!built) continue;
      const { sha, prs: tested } = built;
      this.busy = true;
      w.startCi(sha, `[${tested.join(',')}]`, (_run, passed) => {
        this.busy = false;
        if (passed) w.land(sha, base);
        else if (tested.length === 1) w.fail(tested[0]);
        else {
          const half = Math.ceil(tested.length / 2);
          this.splits.unshift(tested.slice(0, half), tested.slice(half));
        }
        this.pump();
      });
    }
  }
}
