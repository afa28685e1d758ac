import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Job, JobsOptions } from 'bullmq';
import { JOB_NAMES, QueueName } from './queue-names';

/**
 * What each job of a queue carries, by job name: one map per queue, declared beside the domain
 * that owns the queue, so that its processor's handlers and its producers agree without a cast.
 */
export type JobPayloads = Record<string, object>;

/** The payload of a job that carries none (a repeatable sweep). */
export type NoData = Record<string, never>;

/** A queue's payload map, checked to name every job of the queue's job names (`typeof MergeQueuesJob`). */
export type PayloadsOf<Names extends Record<string, string>, P extends { [K in Names[keyof Names]]: object }> = P;

/**
 * A queue's handlers: one per job name, each given its job with the payload that name carries.
 * `token`: the worker's lock token of the job (for job.moveToDelayed and the like).
 */
export type JobHandlers<P extends JobPayloads = JobPayloads> = {
  [K in keyof P & string]: (job: Job<P[K]>, token?: string) => Promise<unknown>;
};

/** A guard for a queue's jobs by name, typed by its payload map (a worker's events hand any job of the queue). */
export function jobNamed<P extends JobPayloads>() {
  return <K extends keyof P & string>(job: Job, name: K): job is Job<P[K]> => job.name === name;
}

/** A queue as its producers see it: `add` takes a job name of the queue and the payload that name carries (BullMQ's Queue is one). */
export interface JobQueue<P extends JobPayloads> {
  add<K extends keyof P & string>(name: K, data: P[K], opts?: JobsOptions): Promise<Job>;
}

const PROCESSOR_QUEUE = 'bullmq:processor_metadata';

/**
 * Refuses to start a worker in which a queue has no processor or a job name has no handler, so a
 * job can never sit in Redis waiting for code that does not exist.
 */
@Injectable()
export class JobHandlerCheck implements OnApplicationBootstrap {
  constructor(private readonly discovery: DiscoveryService) {}

  onApplicationBootstrap(): void {
    const found = new Map<string, JobHandlers>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as { handlers?: JobHandlers } | undefined;
      if (!instance || !wrapper.metatype) continue;
      const meta = Reflect.getMetadata(PROCESSOR_QUEUE, wrapper.metatype) as { name?: string } | undefined;
      if (meta?.name) found.set(meta.name, instance.handlers ?? {});
    }
    const missing: string[] = [];
    for (const queue of Object.values(QueueName)) {
      const handlers = found.get(queue);
      if (!handlers) missing.push(`queue ${queue} has no processor`);
      else for (const job of JOB_NAMES[queue]) if (!handlers[job]) missing.push(`job ${queue}/${job} has no handler`);
    }
    if (missing.length) throw new Error(`worker refuses to start: ${missing.join('; ')}`);
  }
}
