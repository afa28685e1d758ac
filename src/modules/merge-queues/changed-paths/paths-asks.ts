import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { RedisService } from '@/common/redis/redis.module';

/** Returns the fields of the hash KEYS[1] whose value (ms) is after ARGV[1], and deletes the others. */
const LIVE_CLAIMS = `
local flat = redis.call('HGETALL', KEYS[1])
local live = {}
for i = 1, #flat, 2 do
  if (tonumber(flat[i + 1]) or 0) > tonumber(ARGV[1]) then table.insert(live, flat[i]) else redis.call('HDEL', KEYS[1], flat[i]) end
end
return live`;

/**
 * Which queues have a job asking their entries' changed paths (scheduled, running, or waiting out a
 * provider's rate limit), in Redis (one hash: queue id -> until when, in ms), shared by every
 * process. The paths sweep (MergeQueuesProcessor.sweepPaths) leaves those queues alone, so it asks
 * only for entries whose job was lost, and a queue whose provider keeps failing only after a pause.
 * A claim ends by itself: a process that died holding one delays the sweep by its length at most.
 * Claims are advice: taking or dropping one never fails the caller (Redis down only means the sweep
 * may ask a queue twice, or later), so a job's answers are kept whatever Redis does meanwhile.
 */
@Injectable()
export class PathsAsks {
  private readonly logger = new Logger(PathsAsks.name);
  private readonly key: string;
  /** How long a job is trusted to be on its way (scheduled, or between two answers of the provider). */
  readonly claimMs: number;
  /** How long the sweep leaves a queue alone after a job asking its paths failed. */
  readonly failurePauseMs: number;

  constructor(
    private readonly redis: RedisService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.key = `${config.queuePrefix}:mq-paths:asking`;
    this.claimMs = 2 * config.mergeQueues.pathsSweepIntervalMs;
    this.failurePauseMs = 5 * config.mergeQueues.pathsSweepIntervalMs;
  }

  /** A job is on its way for the queue until `untilMs` (now plus `claimMs` unless said). */
  async claim(queueId: string, untilMs = Date.now() + this.claimMs): Promise<void> {
    await this.redis.client.hset(this.key, queueId, String(Math.round(untilMs))).catch((error: unknown) => this.missed(error, queueId, 'claim'));
  }

  /** A job asked all the queue lacked: the sweep may look at it again. */
  async done(queueId: string): Promise<void> {
    await this.redis.client.hdel(this.key, queueId).catch((error: unknown) => this.missed(error, queueId, 'release'));
  }

  private missed(error: unknown, queueId: string, what: string): void {
    this.logger.warn({ err: error, queueId }, `could not ${what} the queue's changed-paths claim; the paths sweep may ask it twice or later`);
  }

  /** The queues claimed at `now`; claims that ended are forgotten. */
  async claimed(now = Date.now()): Promise<Set<string>> {
    return new Set((await this.redis.client.eval(LIVE_CLAIMS, 1, this.key, String(now))) as string[]);
  }
}
