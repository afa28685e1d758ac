import { Processor, WorkerHost } from '@nestjs/bullmq';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { INFRASTRUCTURE_MODULES } from '@/app.module';
import { JobHandlerCheck } from '@/common/queues/job-handlers';
import { QueueName } from '@/common/queues/queue-names';

@Processor(QueueName.Maintenance)
class ProcessorWithoutHandlers extends WorkerHost {
  readonly handlers = {};

  async process(): Promise<void> {}
}

describe(JobHandlerCheck.name, () => {
  it('refuses to start a worker when a queue has no processor', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [...INFRASTRUCTURE_MODULES, DiscoveryModule], providers: [JobHandlerCheck] }).compile();
    await expect(moduleRef.init()).rejects.toThrow('worker refuses to start: queue maintenance has no processor');
    await moduleRef.close();
  });

  it('refuses to start a worker when a job name has no handler', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [...INFRASTRUCTURE_MODULES, DiscoveryModule],
      providers: [JobHandlerCheck, ProcessorWithoutHandlers],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow('job maintenance/purge-expired-oauth-states has no handler');
    await moduleRef.close();
  });
});
