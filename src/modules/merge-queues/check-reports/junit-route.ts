import { type RawBodyRoute, XML_MEDIA_TYPES } from '@/common/http/body-guard';

/** The largest JUnit report taken (what it inflates to, when sent compressed); more is a 413. */
export const JUNIT_BODY_MAX_BYTES = 5 * 1024 * 1024;

/** POST /merge-queues/{id}/batches/{batchId}/checks/junit takes its body as raw XML bytes (bootstrap.ts). */
export const JUNIT_REPORT_ROUTE: RawBodyRoute = {
  method: 'POST',
  path: /^\/merge-queues\/[^/]+\/batches\/[^/]+\/checks\/junit\/?$/,
  mediaTypes: XML_MEDIA_TYPES,
};
