import type { NoData, PayloadsOf } from '@/common/queues/job-handlers';
import type { MergeQueuesJob } from '@/common/queues/queue-names';

/** What each job of the merge-queues queue carries (its processor is MergeQueuesProcessor). */
export type MergeQueuesPayloads = PayloadsOf<
  typeof MergeQueuesJob,
  {
    [MergeQueuesJob.Execute]: { queueId: string };
    [MergeQueuesJob.Tick]: { queueId: string };
    [MergeQueuesJob.Sweep]: NoData;
    /** `rateLimitHits`: how often the job already waited for the provider's rate limit (MergeQueuesProcessor.askPaths). */
    [MergeQueuesJob.AskPaths]: { queueId: string; rateLimitHits?: number };
    [MergeQueuesJob.SweepPaths]: NoData;
    [MergeQueuesJob.ReadTitle]: { queueId: string; entryId: string; number: number };
  }
>;
