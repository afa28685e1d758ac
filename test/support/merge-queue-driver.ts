import {
  createMergeQueueState,
  InvariantMonitor,
  type MergeQueueEvent,
  type MergeQueueOperation,
  type MergeQueueOperationKind,
  type MergeQueueState,
  type PlannerConfig,
  reduceMergeQueue,
} from '@/modules/merge-queues/planner';

type EventWithoutTime = MergeQueueEvent extends infer E ? (E extends { at: number } ? Omit<E, 'at'> : never) : never;

/**
 * Test helper: holds a queue state, feeds events through the real reducer, keeps the operations it
 * returned, and answers them like an obliging executor whose git is a counter of commits.
 */
export class QueueDriver {
  state: MergeQueueState;
  now = 0;
  pending: MergeQueueOperation[] = [];
  readonly issued: MergeQueueOperation[] = [];
  readonly monitor = new InvariantMonitor();
  private shaCounter = 0;

  constructor(config: Partial<PlannerConfig> = {}, baseSha = 'base0') {
    this.state = createMergeQueueState({ baseSha, config });
  }

  send(event: EventWithoutTime): MergeQueueOperation[] {
    const prev = this.state;
    const result = reduceMergeQueue(prev, { ...event, at: this.now } as MergeQueueEvent);
    this.monitor.observe(prev, result.state, result.operations, result.transitions);
    this.state = result.state;
    this.pending.push(...result.operations);
    this.issued.push(...result.operations);
    return result.operations;
  }

  enqueue(number: number, priority = 0): MergeQueueOperation[] {
    return this.send({
      type: 'enqueue',
      entry: { id: `e${number}`, number, headSha: `h${number}`, url: `https://git.example/pr/${number}`, priority },
    });
  }

  /** Answers pending operations of the given kinds with success until none are left. */
  complete(kinds: MergeQueueOperationKind[] = ['prepare', 'publish', 'startCi', 'cleanup']): void {
    for (let guard = 0; guard < 1000; guard++) {
      const op = this.pending.find((o) => kinds.includes(o.kind));
      if (!op) return;
      this.succeed(op);
    }
  }

  succeed(op: MergeQueueOperation): void {
    this.pending = this.pending.filter((o) => o !== op);
    if (op.kind === 'prepare') {
      this.shaCounter += 1;
      this.send({ type: 'operationSucceeded', operationId: op.id, candidateSha: `cand${this.shaCounter}` });
    } else {
      this.send({ type: 'operationSucceeded', operationId: op.id });
    }
  }

  take(kind: MergeQueueOperationKind): MergeQueueOperation {
    const op = this.pending.find((o) => o.kind === kind);
    if (!op) throw new Error(`no pending ${kind}`);
    this.pending = this.pending.filter((o) => o !== op);
    return op;
  }

  /** CI reports `name` on the commit `sha` (by default the batch's candidate, which must then exist). */
  report(batchId: string, state: 'success' | 'failure' | 'pending', name = 'ci', sha?: string): MergeQueueOperation[] {
    const b = this.batch(batchId);
    const tested = sha ?? b.candidateSha;
    if (tested === null) throw new Error(`batch ${batchId} has no candidate yet; name the commit CI tested`);
    return this.send({ type: 'checkReported', batchId, candidateSha: tested, name, state });
  }

  batch(id: string) {
    const b = this.state.batches.find((x) => x.id === id);
    if (!b) throw new Error(`no batch ${id}`);
    return b;
  }

  entry(number: number) {
    const e = this.state.entries.find((x) => x.number === number);
    if (!e) throw new Error(`no entry #${number}`);
    return e;
  }

  live() {
    return this.state.batches.filter((b) => !['landed', 'failed', 'withdrawn'].includes(b.status));
  }
}
