import type { PipelineRunStatus } from '@/generated/prisma/enums';

/**
 * The run lifecycle as data: QUEUED -> RUNNING -> SUCCEEDED | FAILED | CANCELED, and QUEUED -> CANCELED.
 * SUCCEEDED, FAILED and CANCELED are final. Any move not listed is refused.
 */
export const RUN_TRANSITIONS: Readonly<Record<PipelineRunStatus, readonly PipelineRunStatus[]>> = {
  QUEUED: ['RUNNING', 'CANCELED'],
  RUNNING: ['SUCCEEDED', 'FAILED', 'CANCELED'],
  SUCCEEDED: [],
  FAILED: [],
  CANCELED: [],
};

export function mayMove(from: PipelineRunStatus, to: PipelineRunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}
