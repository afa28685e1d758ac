import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '@/common/errors/app-error';
import type { CodeSource, Prisma } from '@/generated/prisma/client';
import { ProviderFailure, providerFailureOf } from '@/modules/git-providers/git-provider.port';
import { MergeQueueGits } from '../engine/gits';
import { MergeQueueWriter } from '../engine/queue-writer';
import { MergeQueuesRepository } from '../merge-queues.repository';
import { checkedConfig, type MergeQueueEvent } from '../planner';
import {
  bindingsFromGithub,
  type GithubRequiredCheck,
  requiredChecksFromGithub,
  type RequiredChecksRead,
  requiredChecksReadOf,
} from '../policy/github-required-checks';
import { policyOf, storedPolicy } from '../policy/queue-policy';

/** What a read of GitHub's required checks found: the checks, or why there are none to take. */
export type GithubChecksAnswer = { ok: true; checks: GithubRequiredCheck[]; skipped: string[] } | { ok: false; reason: string; failure?: unknown };

/** What asked for a refresh, for the event trail. */
export type RefreshTrigger = { kind: 'api'; actor: string } | { kind: 'webhook'; deliveryId: string; event: string };

/** What a refresh did to one queue. */
export interface RefreshResult {
  queueId: string;
  /** The required checks changed. */
  changed: boolean;
  /** GitHub's answer was taken (false: the last known checks are kept, `note` says why). */
  read: boolean;
  note: string;
  /** The failure behind a read that was not taken (a provider failure, or GitHub requiring nothing). */
  failure?: unknown;
}

/**
 * `requiredChecksFrom: branchProtection`: the queue's required checks are the checks GitHub requires
 * on its base branch (its protection rule and the rulesets that apply to it), read with the
 * integration's token (GitHubBranchRules) and mapped by policy/github-required-checks.ts. A read
 * changes the required checks through the planner's `configure` event, as a PATCH of
 * `requiredChecks` does (batches not already landing are withdrawn when the names change), and
 * keeps what it read with when (`MergeQueue.requiredChecksRead`). A read that fails, or that finds
 * GitHub requiring nothing, keeps the last known checks and says why in the events and in
 * `requiredChecksRead.failed`: the queue never lands with fewer checks than it knew of.
 */
@Injectable()
export class RequiredChecksFromGithub {
  private readonly logger = new Logger(RequiredChecksFromGithub.name);

  constructor(
    private readonly gits: MergeQueueGits,
    private readonly writer: MergeQueueWriter,
    private readonly repository: MergeQueuesRepository,
  ) {}

  /** GitHub's required checks on `branch` of the code source; a provider failure propagates as ProviderFailure. */
  async read(source: CodeSource, branch: string): Promise<{ checks: GithubRequiredCheck[]; skipped: string[] }> {
    const rules = await this.gits.branchRules(source);
    if (!rules) throw new ProviderFailure('rejected', `${source.provider} code sources have no branch protection to read`);
    const { protection, rules: branchRules } = await rules.requirements(branch);
    return requiredChecksFromGithub(protection, branchRules);
  }

  /** The document kept after a read that found `checks` at `at`. */
  static readDocument(checks: readonly GithubRequiredCheck[], at: Date): RequiredChecksRead {
    return { readAt: at.toISOString(), checks: [...checks] };
  }

  /**
   * Reads GitHub's required checks for the queue's base branch again and applies them (see the
   * class). A queue whose checks come from its settings is left as it is.
   */
  async refresh(organizationId: string, queueId: string, trigger: RefreshTrigger): Promise<RefreshResult> {
    const queue = await this.repository.find(organizationId, queueId);
    if (policyOf(queue.policy).requiredChecksFrom !== 'branchProtection')
      return { queueId, changed: false, read: false, note: 'its required checks come from its settings' };
    const branch = queue.pendingBaseRef ?? queue.baseRef;
    let answer: GithubChecksAnswer;
    try {
      const { checks, skipped } = await this.read(queue.repository, branch);
      answer =
        checks.length > 0
          ? { ok: true, checks, skipped }
          : { ok: false, reason: `GitHub requires no check on ${branch} (neither its protection rule nor a ruleset); the last known checks are kept` };
    } catch (error) {
      const failure = providerFailureOf(error);
      if (!failure && !(error instanceof AppError)) throw error;
      const why = failure ? failure.reason : (error as AppError).message;
      answer = { ok: false, reason: `GitHub's required checks on ${branch} could not be read (${why}); the last known checks are kept`, failure: error };
      this.logger.warn(`merge queue ${queueId}: ${answer.reason}`);
    }
    const now = new Date();
    const trail: Record<string, unknown> = {
      requiredChecksFrom: 'branchProtection',
      trigger: trigger.kind === 'api' ? { kind: 'api', actor: trigger.actor } : { kind: 'webhook', deliveryId: trigger.deliveryId, event: trigger.event },
    };
    const { outcome } = await this.writer.apply({
      organizationId,
      queueId,
      build: ({ row, state }) => {
        // Set back to `settings` since the read: nothing to apply.
        if (policyOf(row.policy).requiredChecksFrom !== 'branchProtection') return [];
        let names = state.config.requiredChecks;
        if (answer.ok) {
          try {
            names = checkedConfig({ ...state.config, requiredChecks: bindingsFromGithub(answer.checks).names }).requiredChecks;
            Object.assign(trail, { read: 'ok', checks: answer.checks, ...(answer.skipped.length > 0 && { skipped: answer.skipped }) });
          } catch (error) {
            answer = { ok: false, reason: `GitHub's required checks cannot be the queue's (${(error as Error).message}); the last known checks are kept` };
          }
        }
        if (!answer.ok) Object.assign(trail, { read: 'failed', reason: answer.reason });
        // A configure event with the same names changes nothing and leaves the read in the trail.
        const event: MergeQueueEvent = { type: 'configure', config: { requiredChecks: [...names] }, at: now.getTime() };
        return [event];
      },
      detail: trail,
      after: async (q, { row, state }) => {
        if (policyOf(row.policy).requiredChecksFrom !== 'branchProtection') return;
        const last = requiredChecksReadOf(row.requiredChecksRead) ?? { checks: [] };
        const read: RequiredChecksRead = answer.ok
          ? RequiredChecksFromGithub.readDocument(answer.checks, now)
          : { ...last, failed: { at: now.toISOString(), reason: answer.reason } };
        const policy = answer.ok ? { ...policyOf(row.policy), checkSources: bindingsFromGithub(answer.checks).checkSources } : policyOf(row.policy);
        await q.setQueueFields({
          settings: state.config as unknown as Prisma.InputJsonObject,
          policy: storedPolicy(policy, state.config.requiredChecks) as Prisma.InputJsonObject,
          requiredChecksRead: read as unknown as Prisma.InputJsonObject,
        });
      },
    });
    const note = answer.ok
      ? `required checks read from GitHub: ${answer.checks.map((c) => (c.app !== undefined ? `${c.name} (app ${c.app})` : c.name)).join(', ')}`
      : answer.reason;
    return { queueId, changed: outcome.changed, read: answer.ok, note, ...(!answer.ok && { failure: answer.failure ?? answer.reason }) };
  }

  /**
   * Refreshes every queue of a repository (or, for an organization ruleset's delivery that names no
   * repository, of every repository of the integration) whose checks come from branch protection.
   */
  async refreshRepository(
    target: { organizationId: string; integrationId: string; repositoryId?: string },
    trigger: RefreshTrigger,
    atMost: number,
  ): Promise<RefreshResult[]> {
    const ids = await this.repository.branchProtectionQueues(target.organizationId, target.integrationId, target.repositoryId, atMost);
    const results: RefreshResult[] = [];
    for (const id of ids) results.push(await this.refresh(target.organizationId, id, trigger));
    return results;
  }
}
