import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { RequestErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { decodeCursor, Page, PaginationQueryDto } from '@/common/pagination/pagination';
import type { CodeSource, Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { providerError } from '@/modules/git-providers/git-providers.errors';
import { type AskedPaths, keepPaths, lanesEvents, MergeQueuePaths } from './changed-paths/changed-paths';
import { MERGE_QUEUE_PROVIDERS, MergeQueueGits } from './engine/gits';
import { batchRowId } from './engine/ids';
import { type LockedQueue, MergeQueueWriter } from './engine/queue-writer';
import type { QueueTransaction } from './engine/store/queue-transaction';
import type { EntryView, QueueView, QueueWithSource } from './engine/store/queue-view';
import { MergeQueueTitles } from './titles/pr-titles';
import { XML_MEDIA_TYPES } from '@/common/http/body-guard';
import { decodeJunit, JunitError, type JunitSummary, readJunit } from './check-reports/junit';
import { EVENTS_ORDER, MergeQueuesRepository } from './merge-queues.repository';
import {
  CreateMergeQueueDto,
  CreateMergeQueueEntryDto,
  MergeQueueBatchDto,
  MergeQueueChainDto,
  MergeQueueDto,
  MergeQueueEntryDto,
  MergeQueueEventDto,
  MAX_FAILURE_FILE_LENGTH,
  MAX_FAILURE_TEST_LENGTH,
  MAX_REPORTED_FAILURES,
  ReportCheckDto,
  ReportJunitQueryDto,
  toMergeQueueBatchDto,
  toMergeQueueDto,
  toMergeQueueEntryDto,
  toMergeQueueEventDto,
  UpdateMergeQueueDto,
  UpdateMergeQueueEntryDto,
} from './dto/merge-queue.dto';
import { MergeQueueErrors } from './merge-queues.errors';
import {
  ENTRY_DETAILS_EVENTS,
  entryLanesOf,
  type EntryLanesView,
  type MergeQueueEntryDetailsDto,
  toMergeQueueEntryDetailsDto,
} from './dto/merge-queue-entry-details.dto';
import { type MergeQueueBatchDetailsDto, type MergeQueueFailFirstDto, toFailureDto, toMergeQueueBatchDetailsDto } from './dto/merge-queue-batch-details.dto';
import type { EntryOrigin } from './provider-events/pull-request-requests';
import { type MergeQueueSettingsDto, type UpdateMergeQueueSettingsDto } from './dto/merge-queue-settings.dto';
import { bindingsFromGithub, type GithubRequiredCheck, requiredChecksReadOf } from './policy/github-required-checks';
import { bindingsOf, type CheckBinding, DEFAULT_POLICY, policyOf, type QueuePolicy, requiredCheckSettings, storedPolicy } from './policy/queue-policy';
import { type RefreshResult, RequiredChecksFromGithub } from './required-checks/required-checks-from-github';
import {
  batchHints,
  failFirstTests,
  checkedConfig,
  checkReportFit,
  createMergeQueueState,
  estimateMergeTimes,
  FINAL_BATCH_STATUSES,
  FINAL_ENTRY_STATUSES,
  type MergeQueueEntryStatus,
  type MergeQueueEvent,
  pathGroupsOf,
  type QueueSettings,
} from './planner';

export type QueueControl = 'pause' | 'resume' | 'disable' | 'enable';

const CONTROL_AUDIT = {
  pause: AuditAction.MergeQueuePaused,
  resume: AuditAction.MergeQueueResumed,
  disable: AuditAction.MergeQueueDisabled,
  enable: AuditAction.MergeQueueEnabled,
} as const;

/**
 * The merge queue's API rules. Every change goes through MergeQueueWriter.apply (one
 * transaction under the queue row's lock, which starts the queue's executor itself once it
 * committed) and answers with the rows that transaction left; every read goes through
 * MergeQueuesRepository (the organization's rows only).
 */
@Injectable()
export class MergeQueuesService {
  constructor(
    private readonly repository: MergeQueuesRepository,
    private readonly writer: MergeQueueWriter,
    private readonly gits: MergeQueueGits,
    private readonly paths: MergeQueuePaths,
    private readonly githubChecks: RequiredChecksFromGithub,
    private readonly titles: MergeQueueTitles,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(principal: Principal, dto: CreateMergeQueueDto): Promise<MergeQueueDto> {
    const organizationId = principal.organizationId;
    const source = await this.repository.codeSource(organizationId, dto.codeSourceId);
    if (!source)
      throw new AppError(MergeQueueErrors.CODE_SOURCE_NOT_FOUND, {
        metadata: { codeSourceId: dto.codeSourceId },
        details: [invalidFields(['data.codeSourceId: no such code source'])],
      });
    // A queue moving to this ref (PATCH) holds it already.
    if (await this.repository.baseRefTaken(organizationId, source.id, dto.baseRef, { pendingOnly: true })) {
      throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: source.id, baseRef: dto.baseRef } });
    }
    // The engine's git operations exist for bare repositories on this server's disk and for GitHub.
    if (!MERGE_QUEUE_PROVIDERS.includes(source.provider))
      throw new AppError(MergeQueueErrors.PROVIDER_NOT_SUPPORTED, {
        metadata: { codeSourceId: source.id, provider: source.provider },
        details: [invalidFields([`data.codeSourceId: is a ${source.provider} code source`])],
      });
    // An app installation's queue acts only on repositories the installation covers (issue 38).
    await this.gits.assertCovered(source);
    const baseSha = await this.readBase(source, dto.baseRef);
    if (baseSha === null)
      throw new AppError(MergeQueueErrors.BASE_REF_NOT_FOUND, {
        metadata: { baseRef: dto.baseRef },
        details: [invalidFields([`data.baseRef: ${dto.baseRef} is not a branch of the repository`])],
      });
    // requiredChecksFrom: branchProtection reads the checks GitHub requires on the base branch now.
    const fromGithub =
      dto.settings?.requiredChecksFrom === 'branchProtection'
        ? await this.githubChecksAt(source, dto.baseRef, 'data.settings.requiredChecksFrom', dto.requiredChecks)
        : undefined;
    const github = fromGithub && bindingsFromGithub(fromGithub);
    let state;
    try {
      state = createMergeQueueState({ baseSha, config: plannerSettings({ ...dto, ...(github && { requiredChecks: github.names }) }) });
    } catch (error) {
      throw new AppError(MergeQueueErrors.INVALID_SETTINGS, { details: [invalidFields([`data: ${(error as Error).message}`])] });
    }
    try {
      return render(
        await this.repository.create(
          principal,
          {
            organizationId,
            repositoryId: source.id,
            baseRef: dto.baseRef,
            state,
            policy: storedPolicy(
              { ...DEFAULT_POLICY, ...definedOf(dto.settings ?? {}), ...(github && { checkSources: github.checkSources }) },
              state.config.requiredChecks,
            ),
            ...(fromGithub && { requiredChecksRead: { ...RequiredChecksFromGithub.readDocument(fromGithub, new Date()) } }),
          },
          this.config.mergeQueues.maxPerOrganization,
        ),
      );
    } catch (error) {
      if (isUniqueViolation(error, 'baseRef'))
        throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: source.id, baseRef: dto.baseRef } });
      throw error;
    }
  }

  async list(principal: Principal, query: PaginationQueryDto): Promise<Page<MergeQueueDto>> {
    const page = await this.repository.list(principal.organizationId, query);
    return { ...page, data: page.data.map(render) };
  }

  async get(principal: Principal, id: string): Promise<MergeQueueDto> {
    return render(await this.repository.findView(principal.organizationId, id));
  }

  /**
   * New settings and/or a new base ref, in one event transaction. Settings apply to what is planned
   * next (new required checks withdraw the batches not yet landing). A new base ref is checked to
   * exist, then the queue goes `migrating`; the worker finishes any land in flight on the old ref
   * and then moves the queue (MergeQueueExecutor.completeMigration). A disabled queue is not
   * planning and is not `migrating`, but a land may still be finishing: it moves the same way.
   */
  async update(principal: Principal, id: string, dto: UpdateMergeQueueDto, ifMatch: string | undefined): Promise<MergeQueueDto> {
    const expected = parseIfMatch(ifMatch);
    const current = await this.repository.find(principal.organizationId, id);
    const newRef = dto.baseRef !== undefined && dto.baseRef !== (current.pendingBaseRef ?? current.baseRef) ? dto.baseRef : undefined;
    if (newRef !== undefined) {
      if ((await this.readBase(current.repository, newRef)) === null)
        throw new AppError(MergeQueueErrors.BASE_REF_NOT_FOUND, {
          metadata: { baseRef: newRef },
          details: [invalidFields([`data.baseRef: ${newRef} is not a branch of the repository`])],
        });
      if (await this.repository.baseRefTaken(principal.organizationId, current.repositoryId, newRef, { except: id }))
        throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: current.repositoryId, baseRef: newRef } });
    }
    const settings = plannerSettings(dto);
    try {
      const { view } = await this.writer.apply({
        organizationId: principal.organizationId,
        queueId: id,
        build: ({ row, state }) => {
          if (expected !== undefined && row.revision.toString() !== expected) {
            throw new AppError(MergeQueueErrors.REVISION_MISMATCH, { metadata: { expected, revision: row.revision.toString() } });
          }
          if (dto.requiredChecks !== undefined && policyOf(row.policy).requiredChecksFrom === 'branchProtection') throw checksFromGithub('data.requiredChecks');
          try {
            checkedConfig({ ...state.config, ...settings });
          } catch (error) {
            throw new AppError(MergeQueueErrors.INVALID_SETTINGS, { details: [invalidFields([`data: ${(error as Error).message}`])] });
          }
          const at = Date.now();
          const events: MergeQueueEvent[] = [];
          if (Object.keys(settings).length) events.push({ type: 'configure', config: settings, at });
          // A disabled queue is not planning: it moves once nothing is landing, like the rest.
          if (newRef !== undefined && row.status !== 'disabled') events.push({ type: 'migrate', at });
          return events;
        },
        detail: newRef !== undefined ? { baseRef: newRef } : undefined,
        after: async (q, queue, applied) => {
          await q.setQueueFields({
            settings: applied.state.config as unknown as Prisma.InputJsonObject,
            // Sources of checks no longer required are dropped (a name required again later is plain).
            policy: storedPolicy(policyOf(queue.row.policy), applied.state.config.requiredChecks) as Prisma.InputJsonObject,
            ...(newRef !== undefined && { pendingBaseRef: newRef }),
          });
          const groups = applied.state.config.pathGroups ?? [];
          if (JSON.stringify(applied.before.config.pathGroups ?? []) !== JSON.stringify(groups)) await q.relane(groups);
          if (applied.changed || newRef !== undefined) {
            await q.audit(principal, { action: AuditAction.MergeQueueUpdated, metadata: { ...dto, revision: String(applied.state.revision) } });
          }
        },
        // The worker finishes a move to a new base ref; start it even though no operation was issued.
        startExecutor: newRef !== undefined,
        returning: { view: true },
      });
      // Entries without kept paths (queued before the groups) get theirs asked by the worker.
      if (dto.pathGroups?.length) await this.paths.ask(id, view!.row.revision.toString());
      // Checks from GitHub follow the queue to its new branch (a read that fails keeps them, and says so in the events).
      if (newRef !== undefined && policyOf(view!.row.policy).requiredChecksFrom === 'branchProtection') {
        const refreshed = await this.githubChecks.refresh(principal.organizationId, id, { kind: 'api', actor: principal.actorId });
        if (refreshed.changed) return render(await this.repository.findView(principal.organizationId, id));
      }
      return render(view!);
    } catch (error) {
      if (newRef !== undefined && (isUniqueViolation(error, 'baseRef') || isUniqueViolation(error, 'pendingBaseRef')))
        throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: current.repositoryId, baseRef: newRef } });
      throw error;
    }
  }

  /** The queue's own settings: its required checks with their sources, onHeadPush, skippedPasses. */
  async settings(principal: Principal, id: string): Promise<MergeQueueSettingsDto> {
    const row = await this.repository.find(principal.organizationId, id);
    return settingsDto((row.settings as { requiredChecks: string[] }).requiredChecks, policyOf(row.policy), row.requiredChecksRead);
  }

  /**
   * Reads the checks GitHub requires on the queue's base branch again and applies them
   * (RequiredChecksFromGithub.refresh): a queue whose checks come from its settings is a 422; a
   * read that fails keeps the last known checks, is recorded in the events and the settings, and
   * answers as a provider failure does (502, 503...); GitHub requiring nothing is a 422.
   */
  async refreshRequiredChecks(principal: Principal, id: string): Promise<MergeQueueSettingsDto> {
    const row = await this.repository.find(principal.organizationId, id);
    if (policyOf(row.policy).requiredChecksFrom !== 'branchProtection')
      throw new AppError(MergeQueueErrors.CHECKS_NOT_FROM_GITHUB, { metadata: { id, requiredChecksFrom: policyOf(row.policy).requiredChecksFrom } });
    const result: RefreshResult = await this.githubChecks.refresh(principal.organizationId, id, { kind: 'api', actor: principal.actorId });
    if (!result.read) {
      const failure = result.failure;
      if (failure instanceof AppError) throw failure;
      if (failure instanceof ProviderFailure) throw providerError(failure, 'in-use');
      throw new AppError(MergeQueueErrors.NO_CHECKS_ON_GITHUB, { message: result.note, metadata: { id, baseRef: row.baseRef } });
    }
    return this.settings(principal, id);
  }

  /**
   * The checks GitHub requires on `branch` (creating a queue, or setting requiredChecksFrom:
   * branchProtection): a 422 naming `field` for a code source not on GitHub, for checks given by
   * hand beside it, and when GitHub requires none; a provider failure answers as everywhere.
   */
  private async githubChecksAt(source: CodeSource, branch: string, field: string, handSet?: unknown): Promise<GithubRequiredCheck[]> {
    if (handSet !== undefined) throw checksFromGithub(field.replace(/settings\.requiredChecksFrom$|requiredChecksFrom$/, 'requiredChecks'));
    if (source.provider !== 'GITHUB' && source.provider !== 'GITHUB_ENTERPRISE')
      throw new AppError(MergeQueueErrors.INVALID_SETTINGS, {
        message: 'Only a GitHub queue can take its required checks from branch protection.',
        details: [invalidFields([`${field}: branchProtection needs a GitHub code source (this one is ${source.provider})`])],
      });
    let checks: GithubRequiredCheck[];
    try {
      ({ checks } = await this.githubChecks.read(source, branch));
    } catch (error) {
      if (error instanceof ProviderFailure) throw providerError(error, 'in-use');
      throw error;
    }
    if (checks.length === 0)
      throw new AppError(MergeQueueErrors.NO_CHECKS_ON_GITHUB, {
        metadata: { baseRef: branch },
        details: [invalidFields([`${field}: GitHub requires no check on ${branch} (neither its protection rule nor a ruleset)`])],
      });
    return checks;
  }

  /**
   * Changes the queue's own settings in one event transaction. New required check names go through
   * the planner as a `configure` event (checked as at creation; batches not already landing are
   * withdrawn); their sources, onHeadPush and skippedPasses are stored in the queue's policy and
   * apply to the next provider event.
   */
  async updateSettings(principal: Principal, id: string, dto: UpdateMergeQueueSettingsDto, ifMatch: string | undefined): Promise<MergeQueueSettingsDto> {
    const expected = parseIfMatch(ifMatch);
    let bindings: { names: string[]; checkSources: Record<string, CheckBinding> } | undefined;
    try {
      bindings = dto.requiredChecks && bindingsOf(dto.requiredChecks.map((c) => ({ name: c.name, source: c.source ?? 'checkRun', app: c.app })));
    } catch (error) {
      throw new AppError(MergeQueueErrors.INVALID_SETTINGS, { details: [invalidFields([`data.${(error as Error).message}`])] });
    }
    // Setting requiredChecksFrom: branchProtection reads GitHub's checks now (before the lock), and they replace the queue's.
    let fromGithub: GithubRequiredCheck[] | undefined;
    if (dto.requiredChecksFrom === 'branchProtection') {
      const queue = await this.repository.find(principal.organizationId, id);
      fromGithub = await this.githubChecksAt(queue.repository, queue.pendingBaseRef ?? queue.baseRef, 'data.requiredChecksFrom', dto.requiredChecks);
      bindings = bindingsFromGithub(fromGithub);
    }
    const readAt = new Date();
    const { result } = await this.writer.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: ({ row, state }) => {
        if (expected !== undefined && row.revision.toString() !== expected) {
          throw new AppError(MergeQueueErrors.REVISION_MISMATCH, { metadata: { expected, revision: row.revision.toString() } });
        }
        // Checks by hand while they come from GitHub (and the request does not change that).
        if (dto.requiredChecks !== undefined && dto.requiredChecksFrom === undefined && policyOf(row.policy).requiredChecksFrom === 'branchProtection')
          throw checksFromGithub('data.requiredChecks');
        if (!bindings || JSON.stringify(bindings.names) === JSON.stringify(state.config.requiredChecks)) return [];
        try {
          checkedConfig({ ...state.config, requiredChecks: bindings.names });
        } catch (error) {
          throw new AppError(MergeQueueErrors.INVALID_SETTINGS, { details: [invalidFields([`data.requiredChecks: ${(error as Error).message}`])] });
        }
        return [{ type: 'configure', config: { requiredChecks: bindings.names }, at: Date.now() }];
      },
      after: async (q, queue, applied) => {
        const before = policyOf(queue.row.policy);
        const policy: QueuePolicy = {
          onHeadPush: dto.onHeadPush ?? before.onHeadPush,
          skippedPasses: dto.skippedPasses ?? before.skippedPasses,
          checkSources: bindings?.checkSources ?? before.checkSources,
          mergeMethod: dto.mergeMethod ?? before.mergeMethod,
          enqueueLabel: dto.enqueueLabel === undefined ? before.enqueueLabel : dto.enqueueLabel,
          commentCommands: dto.commentCommands ?? before.commentCommands,
          requireApproval: dto.requireApproval ?? before.requireApproval,
          requiredChecksFrom: dto.requiredChecksFrom ?? before.requiredChecksFrom,
        };
        const stored = storedPolicy(policy, applied.state.config.requiredChecks);
        const read = fromGithub ? RequiredChecksFromGithub.readDocument(fromGithub, readAt) : queue.row.requiredChecksRead;
        await q.setQueueFields({
          settings: applied.state.config as unknown as Prisma.InputJsonObject,
          policy: stored as Prisma.InputJsonObject,
          ...(fromGithub && { requiredChecksRead: read as unknown as Prisma.InputJsonObject }),
        });
        const shown = settingsDto(applied.state.config.requiredChecks, policyOf(stored), read);
        if (applied.changed || JSON.stringify(stored) !== JSON.stringify(storedPolicy(before, applied.before.config.requiredChecks))) {
          await q.audit(principal, {
            action: AuditAction.MergeQueueUpdated,
            metadata: { settings: shown as unknown as Prisma.InputJsonObject, revision: String(applied.state.revision) },
          });
        }
        return shown;
      },
    });
    return result;
  }

  /** Pause, resume, disable or enable; `ifMatch` (the revision the caller saw) makes a stale request a 409. */
  async control(principal: Principal, id: string, control: QueueControl, ifMatch: string | undefined): Promise<MergeQueueDto> {
    const expected = parseIfMatch(ifMatch);
    const { view } = await this.writer.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: ({ row }) => {
        if (expected !== undefined && row.revision.toString() !== expected) {
          throw new AppError(MergeQueueErrors.REVISION_MISMATCH, { metadata: { expected, revision: row.revision.toString() } });
        }
        if (row.status === 'disabled' && (control === 'pause' || control === 'resume')) throw new AppError(MergeQueueErrors.DISABLED, { metadata: { id } });
        return [{ type: control, at: Date.now() }];
      },
      after: async (q, _queue, applied) => {
        if (applied.changed) {
          await q.audit(principal, {
            action: CONTROL_AUDIT[control],
            metadata: { from: applied.before.status, to: applied.state.status, revision: String(applied.state.revision) },
          });
        }
      },
      returning: { view: true },
    });
    return render(view!);
  }

  async enqueue(principal: Principal, id: string, dto: CreateMergeQueueEntryDto): Promise<MergeQueueEntryDto> {
    const entryId = randomUUID();
    const queue = await this.repository.find(principal.organizationId, id);
    const paths = await this.changedPaths(principal, id, dto.headSha, undefined, queue);
    const origin: EntryOrigin = { via: 'api', actor: principal.actorId, actorKind: 'principal' };
    const { entry, result } = await this.writer.apply({
      organizationId: principal.organizationId,
      queueId: id,
      // Under the queue's lock, from the rows (the state may be a window of the waiting line).
      build: async (_locked, q) => {
        const limit = this.config.mergeQueues.maxLiveEntries;
        const { duplicateId, live } = await q.liveEntries(dto.number, limit);
        if (duplicateId) throw new AppError(MergeQueueErrors.ENTRY_EXISTS, { metadata: { number: dto.number, entryId: duplicateId } });
        if (live >= limit) {
          throw new AppError(MergeQueueErrors.ENTRY_LIMIT_REACHED, {
            message: `The queue already holds ${limit} live entries, the most this server allows (MERGE_QUEUE_MAX_LIVE_ENTRIES); wait for some to land.`,
            metadata: { limit },
          });
        }
        return [
          {
            type: 'enqueue',
            at: Date.now(),
            entry: {
              id: entryId,
              number: dto.number,
              headSha: dto.headSha,
              url: dto.url,
              ...(dto.title !== undefined && { title: dto.title }),
              ...(dto.priority !== undefined && { priority: dto.priority }),
            },
          },
          // Its lanes, when its paths are known, reach the planner with it.
          ...lanesEvents(_locked.row, entryId, dto.headSha, paths),
        ];
      },
      detail: { origin },
      after: async (q, { row }) => {
        await q.setEntryOrigin(entryId, origin);
        if (dto.title !== undefined) await q.setTitleSource(entryId, 'request');
        return keepPaths(q, row, entryId, dto.headSha, paths);
      },
      returning: { entryId },
    });
    if (result.askLater) await this.paths.ask(id, entryId);
    // On GitHub the PR's title is GitHub's: the worker reads it (the answer never waits for GitHub).
    if (MergeQueueTitles.fromGitHub(queue.repository)) await this.titles.ask(id, entryId, dto.number);
    return entryDto(result.entry ?? entry, entryId);
  }

  async updateEntry(principal: Principal, id: string, entryId: string, dto: UpdateMergeQueueEntryDto): Promise<MergeQueueEntryDto> {
    const paths = dto.headSha !== undefined ? await this.changedPaths(principal, id, dto.headSha, entryId) : undefined;
    const { entry, result } = await this.writer.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: async (locked, q) => {
        await this.liveEntry(locked, entryId, q);
        const at = Date.now();
        const events: MergeQueueEvent[] = [];
        if (dto.priority !== undefined) events.push({ type: 'setPriority', entryId, priority: dto.priority, at });
        if (dto.setAside !== undefined) events.push({ type: 'setAside', entryId, setAside: dto.setAside, at });
        if (dto.headSha !== undefined)
          events.push({ type: 'headUpdated', entryId, headSha: dto.headSha, at }, ...lanesEvents(locked.row, entryId, dto.headSha, paths, at));
        return events;
      },
      after: async (q, { row }): ReturnType<typeof keepPaths> =>
        dto.headSha !== undefined ? keepPaths(q, row, entryId, dto.headSha, paths) : { askLater: false },
      returning: { entryId },
    });
    if (result.askLater) await this.paths.ask(id, entryId);
    return entryDto(result.entry ?? entry, entryId);
  }

  async removeEntry(principal: Principal, id: string, entryId: string): Promise<MergeQueueEntryDto> {
    const { entry } = await this.writer.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: async (locked, q) => {
        await this.liveEntry(locked, entryId, q);
        return [{ type: 'remove', entryId, at: Date.now() }];
      },
      returning: { entryId },
    });
    return entryDto(entry, entryId);
  }

  /**
   * One entry as the queue's own resource shows it: the spec's entry, how it came, its title and
   * where that came from, its lanes, its batch and the newest events that concern it.
   */
  async entryDetails(principal: Principal, id: string, entryId: string): Promise<MergeQueueEntryDetailsDto> {
    const { entry, batch, events } = await this.repository.entryDetails(principal.organizationId, id, entryId, ENTRY_DETAILS_EVENTS);
    return toMergeQueueEntryDetailsDto(entry, batch, events.map(toMergeQueueEventDto));
  }

  /**
   * One batch as the queue's own resource shows it: the spec's batch, its role and what it is built
   * on, the failing tests CI named, the suspects it holds and the tests to run first.
   */
  async batchDetails(principal: Principal, id: string, batchId: string): Promise<MergeQueueBatchDetailsDto> {
    const read = await this.repository.batchDetails(principal.organizationId, id, { batchId });
    return toMergeQueueBatchDetailsDto(id, read.row, read.batch ? { batch: read.batch, hints: batchHints(read.batch, read.chain, read.entries) } : null);
  }

  /** The fail-first hints of a candidate commit, for CI: the tests to run first (the newest batch with that candidate). */
  async failFirst(principal: Principal, id: string, sha: string): Promise<MergeQueueFailFirstDto> {
    const read = await this.repository.batchDetails(principal.organizationId, id, { candidateSha: sha });
    const tests = read.batch ? batchHints(read.batch, read.chain, read.entries).failFirst : [];
    return { sha, batchId: read.row.id, tests: tests.map(toFailureDto) };
  }

  /** The chain in landing order and the waiting entries, with the planner's estimates (what `cli queue show` draws). */
  chain(principal: Principal, id: string): Promise<MergeQueueChainDto> {
    return this.chainOf(principal.organizationId, id);
  }

  /** The chain of the organization's queue, for a caller that is no principal (the queue's page, opened by a view link). */
  async chainOf(organizationId: string, id: string): Promise<MergeQueueChainDto> {
    const row = await this.repository.find(organizationId, id);
    const state = await this.repository.plannerState(organizationId, id);
    if (!state) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id } });
    const now = Date.now();
    const estimates = new Map(estimateMergeTimes(state, now).map((e) => [e.entryId, e.estimatedMergeAt]));
    const live = state.batches.filter((b) => !FINAL_BATCH_STATUSES.includes(b.status)).sort((a, b) => a.position - b.position);
    const rows = new Map(
      (
        await this.repository.batches(
          organizationId,
          id,
          live.map((b) => batchRowId(id, b.id)),
        )
      ).map((b) => [b.id, b]),
    );
    const iso = (ms: number) => new Date(ms).toISOString();
    const inLine = state.entries.filter((e) => e.status === 'queued' || e.status === 'blocked');
    // With path groups: each listed PR's lanes (and where they come from), and each batch's (those of its PRs, in the groups' order).
    const groups = state.config.pathGroups ?? [];
    const rowsById = groups.length
      ? await this.repository.chainEntries(organizationId, id, [...inLine.map((e) => e.id), ...live.flatMap((b) => b.entryIds)])
      : new Map<string, EntryView>();
    const lanesOf = (entryId: string): EntryLanesView => {
      const entryRow = rowsById.get(entryId);
      return entryRow ? entryLanesOf(entryRow) : {};
    };
    const batchLanes = (entryIds: readonly string[]) => {
      const touched = new Set(entryIds.flatMap((e) => lanesOf(e).lanes ?? []));
      return groups.map((g) => g.name).filter((name) => touched.has(name));
    };
    const entryById = new Map(state.entries.map((e) => [e.id, e]));
    const batches = live.map((b) => {
      const batchRow = rows.get(batchRowId(id, b.id));
      const base = batchRow
        ? toMergeQueueBatchDto(batchRow)
        : { id: batchRowId(id, b.id), position: b.position, prNumbers: b.prNumbers, status: b.status, requiredChecks: [] };
      const hinted = failFirstTests(state, b).length;
      const lands = b.entryIds.map((e) => estimates.get(e)).filter((t): t is number => t !== undefined);
      return {
        ...base,
        role: b.role,
        ...(b.parentId !== null && { parentId: batchRowId(id, b.parentId) }),
        createdAt: (batchRow?.createdAt ?? row.updatedAt).toISOString(),
        ...(b.ciStartedAt !== null && { ciStartedAt: iso(b.ciStartedAt) }),
        ...(lands.length > 0 && { estimatedLandAt: iso(Math.max(...lands)) }),
        ...(groups.length > 0 && { lanes: batchLanes(b.entryIds) }),
        ...(hinted > 0 && { failFirst: hinted }),
        entries: b.entryIds.flatMap((entryId) => {
          const e = entryById.get(entryId);
          return e ? [{ id: e.id, number: e.number, ...(e.title !== null && { title: e.title }), ...lanesOf(e.id) }] : [];
        }),
      };
    });
    const waiting = inLine
      .sort((a, b) => b.priority - a.priority || a.position - b.position)
      .map((e) => ({
        id: e.id,
        number: e.number,
        ...(e.title !== null && { title: e.title }),
        status: e.status,
        priority: e.priority,
        setAside: e.setAside,
        ...(e.block !== null && { block: e.block }),
        enqueuedAt: iso(e.enqueuedAt),
        ...(estimates.has(e.id) && { estimatedMergeAt: iso(estimates.get(e.id) as number) }),
        ...lanesOf(e.id),
      }));
    return {
      id: row.id,
      repository: row.repository.nameWithOwner,
      baseRef: row.baseRef,
      ...(row.pendingBaseRef !== null && { pendingBaseRef: row.pendingBaseRef }),
      baseSha: state.baseSha,
      status: row.status,
      ...(state.hold && {
        hold: {
          kind: state.hold.kind,
          reason: state.hold.reason,
          since: iso(state.hold.since),
          prNumbers: state.hold.entryIds.map((e) => state.entries.find((x) => x.id === e)?.number).filter((n): n is number => n !== undefined),
        },
      }),
      revision: row.revision.toString(),
      batchDepth: row.batchDepth,
      maxParallel: state.config.maxParallel,
      pathGroups: state.config.pathGroups ?? [],
      ciDurationMs: Math.round(state.stats.ciDurationMs),
      now: iso(now),
      batches,
      waiting,
    };
  }

  /**
   * A CI result on the commit it names. A result for the batch's current candidate is recorded; one
   * that arrives before the batch is testing that commit is kept and applied when it is (planner
   * checks.ts); one for a withdrawn or final batch changes nothing. A result for another commit is
   * recorded in the events, changes nothing, and is answered with a 409 naming the candidate.
   */
  async reportCheck(principal: Principal, id: string, batchId: string, dto: ReportCheckDto, from?: Record<string, unknown>): Promise<MergeQueueBatchDto> {
    if (dto.state !== 'failure') {
      const named = [dto.failures !== undefined && 'data.failures', dto.failuresTruncated !== undefined && 'data.failuresTruncated'].filter(
        (f): f is string => f !== false,
      );
      if (named.length > 0) {
        throw new AppError(RequestErrors.VALIDATION_FAILED, {
          message: `Invalid request: ${named.join(', ')}: only a result with state failure names failing tests (state is ${dto.state}).`,
          details: [invalidFields(named.map((f) => `${f}: only a result with state failure names failing tests`))],
          metadata: { fields: named },
        });
      }
    }
    let refused: { candidateSha: string | null } | undefined;
    // Filled once the batch is read under the lock; the writer writes it into the event's trail.
    const detail: Record<string, unknown> = {
      ...(dto.url !== undefined && { url: dto.url }),
      ...(dto.failures !== undefined && { failures: dto.failures.length }),
      ...(dto.failuresTruncated !== undefined && { failuresTruncated: dto.failuresTruncated }),
      ...from,
    };
    // The failing tests as the planner takes them (it keeps the first MAX_CHECK_FAILURES distinct ones).
    const failures = dto.failures?.map((f) => ({
      test: f.test,
      ...(f.target !== undefined && { target: f.target }),
      ...(f.file !== undefined && { file: f.file }),
      ...(f.kind !== undefined && { kind: f.kind }),
    }));
    const { batch } = await this.writer.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: ({ row, state }) => {
        const plannerBatch = state.batches.find((b) => batchRowId(row.id, b.id) === batchId);
        if (!plannerBatch) throw new AppError(MergeQueueErrors.BATCH_NOT_FOUND, { metadata: { id: batchId } });
        if (!state.config.requiredChecks.includes(dto.name)) {
          throw new AppError(MergeQueueErrors.CHECK_NOT_REQUIRED, {
            metadata: { name: dto.name, requiredChecks: state.config.requiredChecks },
            details: [invalidFields([`data.name: is not a required check (${state.config.requiredChecks.join(', ')})`])],
          });
        }
        const binding = policyOf(row.policy).checkSources[dto.name];
        if (binding?.source === 'checkRun' && binding.app !== undefined) {
          throw new AppError(MergeQueueErrors.CHECK_SOURCE_BOUND, {
            message: `The check ${dto.name} counts only check runs of the GitHub App ${binding.app}; the report changed nothing.`,
            metadata: { name: dto.name, app: binding.app },
          });
        }
        const fit = checkReportFit(plannerBatch, dto.sha);
        detail.fit = fit;
        if (fit === 'other') {
          refused = { candidateSha: plannerBatch.candidateSha };
          detail.currentCandidateSha = plannerBatch.candidateSha;
        }
        return [
          {
            type: 'checkReported',
            batchId: plannerBatch.id,
            candidateSha: dto.sha,
            name: dto.name,
            state: dto.state,
            ...(failures && { failures }),
            ...(dto.failuresTruncated !== undefined && { failuresTruncated: dto.failuresTruncated }),
            at: Date.now(),
          },
        ];
      },
      detail,
      after: async (q, _queue, applied) => {
        if (dto.url !== undefined && applied.changed) await q.setChecksUrl(batchId, dto.url);
      },
      returning: { batchId },
    });
    if (refused) {
      throw new AppError(MergeQueueErrors.CHECK_NOT_FOR_CANDIDATE, {
        message:
          refused.candidateSha === null
            ? `Batch ${batchId} has no candidate; the result for ${dto.sha} changed nothing.`
            : `Batch ${batchId} is testing ${refused.candidateSha}, not ${dto.sha}; the result changed nothing.`,
        metadata: { batchId, sha: dto.sha, candidateSha: refused.candidateSha },
      });
    }
    const row = batch;
    if (!row) throw new AppError(MergeQueueErrors.BATCH_NOT_FOUND, { metadata: { id: batchId } });
    return toMergeQueueBatchDto(row);
  }

  /**
   * A JUnit XML report as a check result (POST .../checks/junit): the queue must exist (404 first,
   * whatever the body), then the body must be XML (415) that reads as a report (400 naming where;
   * a DOCTYPE is refused); a report in which no test ran is a 422. The result is then reported as
   * on POST .../checks: `failure` with its failing tests if any test case failed, else `success`.
   */
  async reportJunit(principal: Principal, id: string, batchId: string, query: ReportJunitQueryDto, body: unknown): Promise<MergeQueueBatchDto> {
    await this.repository.find(principal.organizationId, id);
    if (!Buffer.isBuffer(body)) {
      if (body !== undefined) {
        throw new AppError(RequestErrors.UNSUPPORTED_MEDIA_TYPE, {
          message: `The JUnit report must be sent as ${XML_MEDIA_TYPES.join(' or ')}.`,
          metadata: { mediaTypes: XML_MEDIA_TYPES },
        });
      }
      throw new AppError(RequestErrors.VALIDATION_FAILED, {
        message: `Invalid request: body: a JUnit XML report (${XML_MEDIA_TYPES.join(' or ')}) is required.`,
        details: [invalidFields(['body: a JUnit XML report is required'])],
        metadata: { fields: ['body'] },
      });
    }
    let summary: JunitSummary;
    try {
      summary = readJunit(decodeJunit(body), {
        maxFailures: MAX_REPORTED_FAILURES,
        maxTestLength: MAX_FAILURE_TEST_LENGTH,
        maxFileLength: MAX_FAILURE_FILE_LENGTH,
      });
    } catch (error) {
      if (!(error instanceof JunitError)) throw error;
      throw new AppError(RequestErrors.VALIDATION_FAILED, {
        message: `Invalid request: body: ${error.message}`,
        details: [invalidFields([`body: ${error.message}`])],
        metadata: { fields: ['body'], ...(error.line !== undefined && { line: error.line, column: error.column }) },
      });
    }
    if (summary.tests - summary.skipped === 0)
      throw new AppError(MergeQueueErrors.JUNIT_NO_TESTS, { metadata: { tests: summary.tests, skipped: summary.skipped } });
    const failed = summary.failed > 0;
    const report: ReportCheckDto = {
      name: query.name,
      sha: query.sha,
      ...(query.url !== undefined && { url: query.url }),
      state: failed ? 'failure' : 'success',
      ...(failed && { failures: summary.failures, ...(summary.truncated && { failuresTruncated: true }) }),
    };
    return this.reportCheck(principal, id, batchId, report, { via: 'junit', tests: summary.tests, skipped: summary.skipped, failed: summary.failed });
  }

  async events(principal: Principal, id: string, query: PaginationQueryDto): Promise<Page<MergeQueueEventDto>> {
    // A bad cursor is a 400 whether or not the queue exists (as on every list).
    if (query.cursor !== undefined) decodeCursor(EVENTS_ORDER, query.cursor);
    await this.repository.find(principal.organizationId, id);
    return this.repository.events(principal.organizationId, id, query, toMergeQueueEventDto);
  }

  /**
   * The commit the base ref points at, or null when there is none (or the local repository cannot
   * be read); a provider that fails answers as provider failures do everywhere (502, 503, 424...).
   */
  private async readBase(source: CodeSource, baseRef: string): Promise<string | null> {
    // LOCAL_GIT disabled, or its path no longer usable, is an answer of its own (not "no such ref").
    const git = await this.gits.forSource(source).catch((error: unknown) => {
      throw error instanceof ProviderFailure ? providerError(error, 'in-use') : error;
    });
    try {
      return await git.readRef(baseRef);
    } catch (error) {
      if (error instanceof ProviderFailure) throw providerError(error, 'in-use');
      return null;
    }
  }

  /**
   * The paths `headSha` changes when the queue has path groups and their lanes (MergeQueuePaths),
   * asked and matched before the queue's lock; undefined when it has none. A provider failure
   * answers as everywhere (502, 503...); matching never fails or stalls (past its deadline the PR is
   * in every lane).
   */
  private async changedPaths(principal: Principal, id: string, headSha: string, entryId?: string, read?: QueueWithSource): Promise<AskedPaths | undefined> {
    const queue = read ?? (await this.repository.find(principal.organizationId, id));
    if (pathGroupsOf(queue).length === 0) return undefined;
    // A new head for an entry that is not live is refused as the lock would refuse it, without a provider call.
    if (entryId !== undefined) assertLive(entryId, await this.repository.entryStatus(principal.organizationId, id, entryId));
    try {
      return await this.paths.of(queue, headSha);
    } catch (error) {
      if (error instanceof ProviderFailure) throw providerError(error, 'in-use');
      throw error;
    }
  }

  /**
   * The entry is live; a final one (even one the planner's history has dropped) is a 422, an
   * unknown one a 404. One the state does not hold is read from its row: a window of the state
   * leaves out waiting entries (the writer loads the ones an event names).
   */
  private async liveEntry({ state }: LockedQueue, entryId: string, q: QueueTransaction): Promise<void> {
    assertLive(entryId, state.entries.find((e) => e.id === entryId)?.status ?? (await q.storedEntryStatus(entryId)));
  }
}

/** A 404 for an entry the queue does not have, a 422 for a final one. */
function assertLive(entryId: string, status: MergeQueueEntryStatus | null): void {
  if (status === null) throw new AppError(MergeQueueErrors.ENTRY_NOT_FOUND, { metadata: { id: entryId } });
  if (FINAL_ENTRY_STATUSES.includes(status)) throw new AppError(MergeQueueErrors.ENTRY_FINAL, { metadata: { id: entryId, status } });
}

/** The spec's MergeQueue from the rows the repository gives. */
function render(view: QueueView): MergeQueueDto {
  return toMergeQueueDto(view.row, view.entries, view.batches);
}

function entryDto(row: EntryView | null | undefined, entryId: string): MergeQueueEntryDto {
  if (!row) throw new AppError(MergeQueueErrors.ENTRY_NOT_FOUND, { metadata: { id: entryId } });
  return toMergeQueueEntryDto(row);
}

/** A 422 naming `field`: the required checks come from GitHub and are not set by hand. */
function checksFromGithub(field: string): AppError {
  return new AppError(MergeQueueErrors.CHECKS_FROM_GITHUB, {
    details: [
      invalidFields([`${field}: the required checks come from GitHub (requiredChecksFrom: branchProtection); set requiredChecksFrom: settings to set them`]),
    ],
  });
}

/** The settings resource; with branchProtection each check says which GitHub rules require it, and when GitHub was last read. */
function settingsDto(requiredChecks: readonly string[], policy: QueuePolicy, storedRead?: unknown): MergeQueueSettingsDto {
  const read = policy.requiredChecksFrom === 'branchProtection' ? requiredChecksReadOf(storedRead) : null;
  const origins = new Map((read?.checks ?? []).map((c) => [c.name, c.from]));
  return {
    requiredChecks: requiredCheckSettings(requiredChecks, policy).map((c) => (read ? { ...c, from: origins.get(c.name) ?? [] } : c)),
    ...(read && { requiredChecksRead: { ...(read.readAt !== undefined && { readAt: read.readAt }), ...(read.failed && { failed: read.failed }) } }),
    onHeadPush: policy.onHeadPush,
    skippedPasses: policy.skippedPasses,
    mergeMethod: policy.mergeMethod,
    enqueueLabel: policy.enqueueLabel,
    commentCommands: policy.commentCommands,
    requireApproval: policy.requireApproval,
    requiredChecksFrom: policy.requiredChecksFrom,
  };
}

/** The settings of a create or update request as planner tunables (seconds become milliseconds). */
function plannerSettings(dto: Partial<CreateMergeQueueDto>): QueueSettings {
  return {
    ...(dto.requiredChecks !== undefined && { requiredChecks: dto.requiredChecks }),
    ...(dto.minBatch !== undefined && { minBatch: dto.minBatch }),
    ...(dto.maxBatch !== undefined && { maxBatch: dto.maxBatch }),
    ...(dto.maxParallel !== undefined && { maxParallel: dto.maxParallel }),
    ...(dto.flakyRetries !== undefined && { flakyRetries: dto.flakyRetries }),
    ...(dto.screening !== undefined && { screening: dto.screening }),
    ...(dto.pathGroups !== undefined && { pathGroups: dto.pathGroups.map((g) => ({ name: g.name, paths: g.paths })) }),
    ...(dto.checkTimeoutSeconds !== undefined && { checkTimeoutMs: dto.checkTimeoutSeconds * 1000 }),
  };
}

/** The properties of a partial settings body that were given (undefined ones keep the default). */
function definedOf<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** `If-Match: 12` or `If-Match: "12"`; anything else is not a revision and is refused as stale. */
function parseIfMatch(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '' || header.trim() === '*') return undefined;
  return header
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
}
