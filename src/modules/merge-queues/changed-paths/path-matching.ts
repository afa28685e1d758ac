import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import {
  type ChangedPaths,
  type CompiledPathGroups,
  compiledSizeOf,
  compilePathGroups,
  everyLane,
  lanesFor,
  type LanesVerdict,
  matchWorkBound,
  type PathGroup,
  pathOverLimits,
} from '../planner';
import type { MatchAnswer, MatchRequest } from './path-matching.worker';

/**
 * A match whose upper bound of steps (planner matchWorkBound: the paths' characters times the
 * compiled groups' size) is at most this runs on the calling thread: well under a millisecond.
 */
export const INLINE_MATCH_STEPS = 200_000;
/** ...and whose groups compile to at most this many NFA states (compiling costs about a microsecond each). */
export const INLINE_COMPILED_SIZE = 10_000;
/** How long past its deadline a thread may stay silent before it is replaced (it checks the clock every few thousand steps). */
const GRACE_MS = 1_000;
/** Compiled groups kept on the calling thread (each holds its own DFA cache). */
const KEPT = 16;

interface Pending {
  request: MatchRequest;
  resolve: (verdict: LanesVerdict | null) => void;
}

interface Thread {
  worker: Worker;
  busy: Pending | null;
  timer: NodeJS.Timeout | null;
}

/**
 * A PR's lanes from its changed paths under its queue's path groups (issue 41), never a stall:
 * the planner's compiled matcher (planner/path-matcher.ts) runs on the calling thread when its
 * bound is small (INLINE_MATCH_STEPS), and otherwise on one of MERGE_QUEUE_PATH_MATCH_THREADS
 * worker threads with a deadline (MERGE_QUEUE_PATH_MATCH_DEADLINE_MS, counted from when it was
 * asked): past it the PR is in every lane with the reason. A thread that does not answer by the
 * deadline plus a grace is ended and replaced. Callers ask outside the queue's transaction.
 * Threads are the process's own (no limit or counter shared with other processes).
 */
@Injectable()
export class PathMatching implements OnModuleDestroy {
  private readonly logger = new Logger(PathMatching.name);
  private readonly threads: Thread[] = [];
  private readonly waiting: Pending[] = [];
  private readonly compiled = new Map<string, CompiledPathGroups>();
  private nextId = 1;
  readonly deadlineMs: number;
  private readonly size: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.deadlineMs = config.mergeQueues.pathMatchDeadlineMs;
    this.size = config.mergeQueues.pathMatchThreads;
  }

  /** The PR's lanes and, when it is in every lane for want of knowing better, why. */
  async lanes(groups: readonly PathGroup[], paths: ChangedPaths): Promise<LanesVerdict> {
    if (groups.length === 0) return { lanes: [], reason: null };
    if (paths === null) return everyLane(groups, { kind: 'unlisted' });
    if (paths.length === 0) return { lanes: [], reason: null };
    // Over a path limit: answered without compiling or matching anything.
    for (const path of paths) {
      const over = pathOverLimits(path);
      if (over) return everyLane(groups, over);
    }
    const key = JSON.stringify(groups);
    const asked = Date.now();
    const size = compiledSizeOf(groups);
    if (size <= INLINE_COMPILED_SIZE && matchWorkBound(size, paths) <= INLINE_MATCH_STEPS) return lanesFor(this.compiledFor(key, groups), paths)!;
    const verdict = await this.onThread({ id: this.nextId++, key, groups: [...groups], paths: [...paths], deadlineAt: asked + this.deadlineMs });
    return verdict ?? everyLane(groups, { kind: 'deadline', ms: this.deadlineMs });
  }

  onModuleDestroy(): Promise<void> {
    for (const p of this.waiting.splice(0)) p.resolve(null);
    return Promise.all(this.threads.splice(0).map((t) => this.end(t))).then(() => undefined);
  }

  private compiledFor(key: string, groups: readonly PathGroup[]): CompiledPathGroups {
    let m = this.compiled.get(key);
    if (m) this.compiled.delete(key);
    else m = compilePathGroups(groups);
    this.compiled.set(key, m);
    if (this.compiled.size > KEPT) this.compiled.delete(this.compiled.keys().next().value!);
    return m;
  }

  private onThread(request: MatchRequest): Promise<LanesVerdict | null> {
    return new Promise((resolve) => {
      this.waiting.push({ request, resolve });
      this.dispatch();
    });
  }

  /** Gives waiting requests to idle threads (starting them up to the pool's size); a request past its deadline is answered at once. */
  private dispatch(): void {
    while (this.waiting.length > 0) {
      const next = this.waiting[0];
      if (Date.now() >= next.request.deadlineAt) {
        this.waiting.shift();
        next.resolve(null);
        continue;
      }
      let thread = this.threads.find((t) => t.busy === null);
      if (!thread && this.threads.length < this.size) thread = this.start();
      if (!thread) return;
      this.waiting.shift();
      this.run(thread, next);
    }
  }

  private run(thread: Thread, pending: Pending): void {
    thread.busy = pending;
    thread.timer = setTimeout(
      () => {
        // It did not answer by its deadline and the grace: ended and replaced, the PR in every lane.
        this.logger.warn({ deadlineMs: this.deadlineMs }, 'a path-matching thread did not stop at its deadline; replaced');
        this.finish(thread, null);
        this.threads.splice(this.threads.indexOf(thread), 1);
        void this.end(thread);
        this.dispatch();
      },
      Math.max(0, pending.request.deadlineAt - Date.now()) + GRACE_MS,
    );
    thread.timer.unref();
    thread.worker.postMessage(pending.request);
  }

  private finish(thread: Thread, verdict: LanesVerdict | null): void {
    if (thread.timer) clearTimeout(thread.timer);
    thread.timer = null;
    const pending = thread.busy;
    thread.busy = null;
    pending?.resolve(verdict);
  }

  private start(): Thread {
    const worker = new Worker(...workerEntry());
    worker.unref();
    const thread: Thread = { worker, busy: null, timer: null };
    worker.on('message', (answer: MatchAnswer) => {
      if (thread.busy?.request.id !== answer.id) return;
      this.finish(thread, answer.verdict);
      this.dispatch();
    });
    const gone = (error?: unknown) => {
      if (!this.threads.includes(thread)) return;
      if (error) this.logger.error({ err: error }, 'a path-matching thread failed; replaced');
      this.threads.splice(this.threads.indexOf(thread), 1);
      this.finish(thread, null);
      this.dispatch();
    };
    worker.on('error', gone);
    worker.on('exit', () => gone());
    this.threads.push(thread);
    return thread;
  }

  private async end(thread: Thread): Promise<void> {
    if (thread.timer) clearTimeout(thread.timer);
    await thread.worker.terminate().catch(() => undefined);
  }
}

/** The worker's file: the compiled .js beside this one, or the .ts through tsx (tests, tsx scripts). */
function workerEntry(): [string, { execArgv?: string[] }] {
  const js = join(__dirname, 'path-matching.worker.js');
  if (existsSync(js)) return [js, {}];
  return [join(__dirname, 'path-matching.worker.ts'), { execArgv: ['--require', require.resolve('tsx/cjs')] }];
}
