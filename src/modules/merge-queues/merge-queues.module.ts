import { Module } from '@nestjs/common';
import { MergeQueueEngineModule } from './merge-queue-engine.module';
import { MergeQueuesController } from './merge-queues.controller';
import { MergeQueuesService } from './merge-queues.service';

/** Merge queues (API side); the outbox executor runs in the worker (MergeQueuesProcessor). */
@Module({
  imports: [MergeQueueEngineModule],
  controllers: [MergeQueuesController],
  providers: [MergeQueuesService],
})
export class MergeQueuesModule {}
