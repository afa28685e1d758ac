import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';

/** Sets the newest revision posted (never lowers it) and gives the turn back, if still ours, in one step. */
const RECORD_AND_RELEASE = `
local posted = tonumber(redis.call('GET', KEYS[1]) or '-1')
if posted < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3]) end
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
return posted`;

/** Gives the turn back only when this poster still holds it (a turn that expired may be another's). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** Thrown when another process holds the commit's turn for longer than the wait: BullMQ retries the job. */
export class CommitStatusBusy extends Error {
  constructor(key: string) {
    super(`another process is posting the status of ${key}; retried later`);
  }
}

export interface LedgerOptions {
  /** How long a turn is held at most (a process that dies mid-post frees it after this). */
  turnMs: number;
  /** How long a poster waits for another's turn before giving up (the job is retried). */
  waitMs: number;
  /** How long the newest revision posted is remembered (longer than a post's retries last). */
  keepS: number;
}

/**
 * The newest queue revision whose status was posted, per queue, commit and subject, in Redis, so
 * that every worker process agrees: a status decided at an older revision than one already posted
 * is skipped, and posts for one commit take turns (a short lock with a token), so an older one can
 * never reach the provider after a newer one. A turn lasts at most `turnMs` (more than a provider
 * call's timeout, with its retries), so the rule holds unless a post outlives it.
 */
export class CommitStatusLedger {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly options: LedgerOptions,
  ) {}

  /** Runs `post` in the commit's turn unless a newer revision was posted already ('superseded'). */
  async inTurn<T>(key: string, revision: number, post: () => Promise<T>): Promise<T | 'superseded'> {
    const revisionKey = `${this.prefix}:mq-status:{${key}}:revision`;
    const turnKey = `${this.prefix}:mq-status:{${key}}:turn`;
    const token = randomUUID();
    await this.takeTurn(key, turnKey, token);
    let released = false;
    try {
      const posted = Number((await this.redis.get(revisionKey)) ?? -1);
      if (posted > revision) return 'superseded';
      const result = await post();
      await this.redis.eval(RECORD_AND_RELEASE, 2, revisionKey, turnKey, String(revision), token, String(this.options.keepS));
      released = true;
      return result;
    } finally {
      if (!released) await this.redis.eval(RELEASE, 1, turnKey, token).catch(() => undefined);
    }
  }

  private async takeTurn(key: string, turnKey: string, token: string): Promise<void> {
    const until = Date.now() + this.options.waitMs;
    for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
      if ((await this.redis.set(turnKey, token, 'PX', this.options.turnMs, 'NX')) === 'OK') return;
      if (Date.now() + delay > until) throw new CommitStatusBusy(key);
      await sleep(delay);
    }
  }
}

/** Removes a member only while its score is the one read (a newer failure keeps it). */
const FORGET_UNLESS_MOVED = `if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('ZREM', KEYS[1], ARGV[1]) end return 0`;

/** A status post the provider refused on every attempt: which queue, commit and subject to post again. */
export interface StatusRepair {
  queueId: string;
  sha: string;
  subject: { kind: 'entry'; number: number } | { kind: 'candidate'; batchId: string };
}

/**
 * The status posts to repair, in Redis (one sorted set, by when the last attempt failed), shared by
 * every worker process: the repair job posts each again from its queue's state as it is then, and
 * forgets it. One member per queue, commit and subject, however often its posts failed.
 */
export class CommitStatusRepairs {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.key = `${prefix}:mq-status:repairs`;
  }

  async add(repair: StatusRepair): Promise<void> {
    await this.redis.zadd(this.key, String(Date.now()), JSON.stringify({ queueId: repair.queueId, sha: repair.sha, subject: repair.subject }));
  }

  /** The oldest `limit` repairs, each with its member and score (what `forget` needs). */
  async oldest(limit: number): Promise<{ member: string; score: string; repair: StatusRepair }[]> {
    const flat = await this.redis.zrange(this.key, '0', String(limit - 1), 'WITHSCORES');
    const out: { member: string; score: string; repair: StatusRepair }[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ member: flat[i], score: flat[i + 1], repair: JSON.parse(flat[i]) as StatusRepair });
    return out;
  }

  /** Forgets a repair, unless a post of it failed again since it was read (its score moved). */
  async forget(member: string, score: string): Promise<void> {
    await this.redis.eval(FORGET_UNLESS_MOVED, 1, this.key, member, score);
  }
}
