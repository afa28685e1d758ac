import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Job } from 'bullmq';
import { JOB_NAMES, QueueName } from './queue-names';

/** `token`: the worker's lock token of the job (for job.moveToDelayed and the like). */
export type JobHandlers = Record<string, (job: Job, token?: string) => Promise<unknown>>;

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
