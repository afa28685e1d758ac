import { Module } from '@nestjs/common';
import { MergeQueueEngineModule } from './merge-queue-engine.module';
import { MergeQueuesController } from './merge-queues.controller';
import { MergeQueuesService } from './merge-queues.service';
import { QueuePageController } from './view-links/queue-page.controller';
import { QueuePageService } from './view-links/queue-page.service';
import { MergeQueueViewLinksController } from './view-links/view-links.controller';

/** Merge queues (API side); the outbox executor runs in the worker (MergeQueuesProcessor). */
@Module({
  imports: [MergeQueueEngineModule],
  controllers: [MergeQueuesController, MergeQueueViewLinksController, QueuePageController],
  providers: [MergeQueuesService, QueuePageService],
})
export class MergeQueuesModule {}
