import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/http/given-id';
import { decodeCursor, fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { CodeSource, MergeQueue, MergeQueueEvent as EventRow, Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService } from '@/modules/audit/audit.service';
import { ProviderFailure } from '@/modules/git-providers/git-provider.port';
import { providerError } from '@/modules/git-providers/git-providers.errors';
import { MERGE_QUEUE_PROVIDERS, MergeQueueGits } from './engine/merge-queue-gits';
import { MergeQueueScheduler } from './engine/merge-queue-scheduler';
import { type LockedQueue, MergeQueueStore } from './engine/merge-queue-store';
import {
  CreateMergeQueueDto,
  CreateMergeQueueEntryDto,
  MergeQueueBatchDto,
  MergeQueueChainDto,
  MergeQueueDto,
  MergeQueueEntryDto,
  MergeQueueEventDto,
  RECENT_FINAL,
  ReportCheckDto,
  toMergeQueueBatchDto,
  toMergeQueueDto,
  toMergeQueueEntryDto,
  toMergeQueueEventDto,
  UpdateMergeQueueDto,
  UpdateMergeQueueEntryDto,
} from './dto/merge-queue.dto';
import { MergeQueueErrors } from './merge-queues.errors';
import { checkedConfig, createMergeQueueState, estimateMergeTimes, FINAL_BATCH_STATUSES, FINAL_ENTRY_STATUSES, type MergeQueueEvent, type MergeQueueState, type QueueSettings } from './planner';
import { batchRowId } from './engine/merge-queue-ids';

const LIST = newestFirst<MergeQueue>('mergeQueues');
const EVENTS = newestFirst<EventRow>('mergeQueueEvents');
const LIVE_ENTRY_STATUSES = ['queued', 'testing', 'blocked', 'merging'] as const;
const LIVE_BATCH_STATUSES = ['preparing', 'testing', 'ready', 'merging', 'reconciling'] as const;

export type QueueControl = 'pause' | 'resume' | 'disable' | 'enable';

const CONTROL_AUDIT = { pause: AuditAction.MergeQueuePaused, resume: AuditAction.MergeQueueResumed, disable: AuditAction.MergeQueueDisabled, enable: AuditAction.MergeQueueEnabled } as const;

/**
 * The merge queue's API rules. Every change goes through MergeQueueStore.apply (one transaction
 * under the queue row's lock); after it commits, the scheduler starts the queue's executor when
 * the planner issued operations.
 */
@Injectable()
export class MergeQueuesService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly store: MergeQueueStore,
    private readonly scheduler: MergeQueueScheduler,
    private readonly gits: MergeQueueGits,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(principal: Principal, dto: CreateMergeQueueDto): Promise<MergeQueueDto> {
    const organizationId = principal.organizationId;
    const source = await this.prisma.codeSource.findFirst({ where: { id: dto.codeSourceId, organizationId } });
    if (!source) throw new AppError(MergeQueueErrors.CODE_SOURCE_NOT_FOUND, { metadata: { codeSourceId: dto.codeSourceId }, details: [invalidFields(['data.codeSourceId: no such code source'])] });
    // A queue moving to this ref (PATCH) holds it already.
    if (await this.prisma.mergeQueue.findFirst({ where: { repositoryId: source.id, pendingBaseRef: dto.baseRef }, select: { id: true } })) {
      throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: source.id, baseRef: dto.baseRef } });
    }
    // The engine's git operations exist for bare repositories on this server's disk and for GitHub.
    if (!MERGE_QUEUE_PROVIDERS.includes(source.provider)) throw new AppError(MergeQueueErrors.PROVIDER_NOT_SUPPORTED, { metadata: { codeSourceId: source.id, provider: source.provider }, details: [invalidFields([`data.codeSourceId: is a ${source.provider} code source`])] });
    const baseSha = await this.readBase(source, dto.baseRef);
    if (baseSha === null) throw new AppError(MergeQueueErrors.BASE_REF_NOT_FOUND, { metadata: { baseRef: dto.baseRef }, details: [invalidFields([`data.baseRef: ${dto.baseRef} is not a branch of the repository`])] });
    let state;
    try {
      state = createMergeQueueState({ baseSha, config: plannerSettings(dto) });
    } catch (error) {
      throw new AppError(MergeQueueErrors.INVALID_SETTINGS, { details: [invalidFields([`data: ${(error as Error).message}`])] });
    }
    try {
      const row = await this.prisma.$transaction(async (tx) => {
        // The organization's row serializes creations, so two at once cannot both take the last place.
        await tx.$queryRaw`SELECT id FROM "Organization" WHERE id = ${organizationId} FOR UPDATE`;
        const limit = this.config.mergeQueues.maxPerOrganization;
        if ((await tx.mergeQueue.count({ where: { organizationId } })) >= limit) {
          throw new AppError(MergeQueueErrors.QUEUE_LIMIT_REACHED, { message: `The organization already has ${limit} merge queues, the most this server allows (MERGE_QUEUE_MAX_PER_ORGANIZATION).`, metadata: { limit } });
        }
        const queue = await tx.mergeQueue.create({
          data: {
            organizationId,
            repositoryId: source.id,
            baseRef: dto.baseRef,
            revision: BigInt(state.revision),
            status: state.status,
            batchDepth: state.batchDepth,
            settings: state.config as unknown as Prisma.InputJsonObject,
            plannerState: state as unknown as Prisma.InputJsonObject,
          },
        });
        await this.audit.record(tx, principal, { organizationId, action: AuditAction.MergeQueueCreated, targetType: 'mergeQueue', targetId: queue.id, metadata: { repositoryId: source.id, baseRef: dto.baseRef } });
        return queue;
      });
      return this.get(principal, row.id);
    } catch (error) {
      if (isUniqueViolation(error, 'baseRef')) throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: source.id, baseRef: dto.baseRef } });
      throw error;
    }
  }

  async list(principal: Principal, query: PaginationQueryDto): Promise<Page<MergeQueueDto>> {
    const page = await paginate(fromModel(this.prisma.mergeQueue, { organizationId: principal.organizationId }), LIST, query, (row) => row.id);
    // The page's queues with their repositories in one query, rendered in the page's order.
    const rows = new Map((await this.prisma.mergeQueue.findMany({ where: { id: { in: page.data }, organizationId: principal.organizationId }, include: { repository: true } })).map((row) => [row.id, row]));
    const data = await Promise.all(page.data.flatMap((id) => (rows.has(id) ? [this.render(this.prisma, rows.get(id)!)] : [])));
    return { ...page, data };
  }

  async get(principal: Principal, id: string): Promise<MergeQueueDto> {
    return this.render(this.prisma, await this.findQueue(principal.organizationId, id));
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
    const current = await this.findQueue(principal.organizationId, id);
    const newRef = dto.baseRef !== undefined && dto.baseRef !== (current.pendingBaseRef ?? current.baseRef) ? dto.baseRef : undefined;
    if (newRef !== undefined) {
      if ((await this.readBase(current.repository, newRef)) === null) throw new AppError(MergeQueueErrors.BASE_REF_NOT_FOUND, { metadata: { baseRef: newRef }, details: [invalidFields([`data.baseRef: ${newRef} is not a branch of the repository`])] });
      const taken = await this.prisma.mergeQueue.findFirst({ where: { repositoryId: current.repositoryId, id: { not: id }, OR: [{ baseRef: newRef }, { pendingBaseRef: newRef }] }, select: { id: true } });
      if (taken) throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: current.repositoryId, baseRef: newRef } });
    }
    const settings = plannerSettings(dto);
    try {
      const { queue, outcome } = await this.store.apply({
        organizationId: principal.organizationId,
        queueId: id,
        build: ({ row, state }) => {
          if (expected !== undefined && row.revision.toString() !== expected) {
            throw new AppError(MergeQueueErrors.REVISION_MISMATCH, { metadata: { expected, revision: row.revision.toString() } });
          }
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
        after: async (tx, { row }, applied) => {
          await tx.mergeQueue.update({
            where: { id: row.id },
            data: { settings: applied.state.config as unknown as Prisma.InputJsonObject, ...(newRef !== undefined && { pendingBaseRef: newRef }) },
          });
          if (applied.changed || newRef !== undefined) {
            await this.audit.record(tx, principal, { organizationId: row.organizationId, action: AuditAction.MergeQueueUpdated, targetType: 'mergeQueue', targetId: row.id, metadata: { ...dto, revision: String(applied.state.revision) } });
          }
        },
      });
      await this.scheduler.afterCommit(id, queue.state, outcome.operations.length);
      // The worker finishes a move to a new base ref; start it even though no operation was issued.
      if (newRef !== undefined) await this.scheduler.kick(id);
    } catch (error) {
      if (newRef !== undefined && (isUniqueViolation(error, 'baseRef') || isUniqueViolation(error, 'pendingBaseRef'))) throw new AppError(MergeQueueErrors.ALREADY_EXISTS, { metadata: { codeSourceId: current.repositoryId, baseRef: newRef } });
      throw error;
    }
    return this.get(principal, id);
  }

  /** Pause, resume, disable or enable; `ifMatch` (the revision the caller saw) makes a stale request a 409. */
  async control(principal: Principal, id: string, control: QueueControl, ifMatch: string | undefined): Promise<MergeQueueDto> {
    const expected = parseIfMatch(ifMatch);
    const { queue, outcome } = await this.store.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: ({ row }) => {
        if (expected !== undefined && row.revision.toString() !== expected) {
          throw new AppError(MergeQueueErrors.REVISION_MISMATCH, { metadata: { expected, revision: row.revision.toString() } });
        }
        if (row.status === 'disabled' && (control === 'pause' || control === 'resume')) throw new AppError(MergeQueueErrors.DISABLED, { metadata: { id } });
        return [{ type: control, at: Date.now() }];
      },
      after: async (tx, { row }, applied) => {
        if (applied.changed) {
          await this.audit.record(tx, principal, { organizationId: row.organizationId, action: CONTROL_AUDIT[control], targetType: 'mergeQueue', targetId: row.id, metadata: { from: applied.before.status, to: applied.state.status, revision: String(applied.state.revision) } });
        }
      },
    });
    await this.scheduler.afterCommit(id, queue.state, outcome.operations.length);
    return this.get(principal, id);
  }

  async enqueue(principal: Principal, id: string, dto: CreateMergeQueueEntryDto): Promise<MergeQueueEntryDto> {
    const entryId = randomUUID();
    const { queue, outcome } = await this.store.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: ({ state }) => {
        const live = state.entries.find((e) => e.number === dto.number && !FINAL_ENTRY_STATUSES.includes(e.status));
        if (live) throw new AppError(MergeQueueErrors.ENTRY_EXISTS, { metadata: { number: dto.number, entryId: live.id } });
        const limit = this.config.mergeQueues.maxLiveEntries;
        if (state.entries.filter((e) => !FINAL_ENTRY_STATUSES.includes(e.status)).length >= limit) {
          throw new AppError(MergeQueueErrors.ENTRY_LIMIT_REACHED, { message: `The queue already holds ${limit} live entries, the most this server allows (MERGE_QUEUE_MAX_LIVE_ENTRIES); wait for some to land.`, metadata: { limit } });
        }
        return [{ type: 'enqueue', at: Date.now(), entry: { id: entryId, number: dto.number, headSha: dto.headSha, url: dto.url, ...(dto.title !== undefined && { title: dto.title }), ...(dto.priority !== undefined && { priority: dto.priority }) } }];
      },
    });
    await this.scheduler.afterCommit(id, queue.state, outcome.operations.length);
    return this.entry(principal.organizationId, id, entryId);
  }

  async updateEntry(principal: Principal, id: string, entryId: string, dto: UpdateMergeQueueEntryDto): Promise<MergeQueueEntryDto> {
    const { queue, outcome } = await this.store.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: async (locked, tx) => {
        await this.liveEntry(locked, entryId, tx);
        const at = Date.now();
        const events: MergeQueueEvent[] = [];
        if (dto.priority !== undefined) events.push({ type: 'setPriority', entryId, priority: dto.priority, at });
        if (dto.setAside !== undefined) events.push({ type: 'setAside', entryId, setAside: dto.setAside, at });
        if (dto.headSha !== undefined) events.push({ type: 'headUpdated', entryId, headSha: dto.headSha, at });
        return events;
      },
    });
    await this.scheduler.afterCommit(id, queue.state, outcome.operations.length);
    return this.entry(principal.organizationId, id, entryId);
  }

  async removeEntry(principal: Principal, id: string, entryId: string): Promise<MergeQueueEntryDto> {
    const { queue, outcome } = await this.store.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: async (locked, tx) => {
        await this.liveEntry(locked, entryId, tx);
        return [{ type: 'remove', entryId, at: Date.now() }];
      },
    });
    await this.scheduler.afterCommit(id, queue.state, outcome.operations.length);
    return this.entry(principal.organizationId, id, entryId);
  }

  /** The chain in landing order and the waiting entries, with the planner's estimates (what `cli queue show` draws). */
  async chain(principal: Principal, id: string): Promise<MergeQueueChainDto> {
    const row = await this.findQueue(principal.organizationId, id);
    const state = row.plannerState as unknown as MergeQueueState;
    const now = Date.now();
    const estimates = new Map(estimateMergeTimes(state, now).map((e) => [e.entryId, e.estimatedMergeAt]));
    const live = state.batches.filter((b) => !FINAL_BATCH_STATUSES.includes(b.status)).sort((a, b) => a.position - b.position);
    const rows = new Map((await this.prisma.mergeQueueBatch.findMany({ where: { organizationId: principal.organizationId, queueId: id, id: { in: live.map((b) => batchRowId(id, b.id)) } } })).map((b) => [b.id, b]));
    const iso = (ms: number) => new Date(ms).toISOString();
    const batches = live.map((b) => {
      const batchRow = rows.get(batchRowId(id, b.id));
      const base = batchRow ? toMergeQueueBatchDto(batchRow) : { id: batchRowId(id, b.id), position: b.position, prNumbers: b.prNumbers, status: b.status, requiredChecks: [] };
      const lands = b.entryIds.map((e) => estimates.get(e)).filter((t): t is number => t !== undefined);
      return {
        ...base,
        role: b.role,
        ...(b.parentId !== null && { parentId: batchRowId(id, b.parentId) }),
        createdAt: (batchRow?.createdAt ?? row.updatedAt).toISOString(),
        ...(b.ciStartedAt !== null && { ciStartedAt: iso(b.ciStartedAt) }),
        ...(lands.length > 0 && { estimatedLandAt: iso(Math.max(...lands)) }),
      };
    });
    const waiting = state.entries
      .filter((e) => e.status === 'queued' || e.status === 'blocked')
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
      }));
    return {
      id: row.id,
      repository: row.repository.nameWithOwner,
      baseRef: row.baseRef,
      ...(row.pendingBaseRef !== null && { pendingBaseRef: row.pendingBaseRef }),
      baseSha: state.baseSha,
      status: row.status,
      revision: row.revision.toString(),
      batchDepth: row.batchDepth,
      maxParallel: state.config.maxParallel,
      ciDurationMs: Math.round(state.stats.ciDurationMs),
      now: iso(now),
      batches,
      waiting,
    };
  }

  /** A CI result. A result for a withdrawn or final batch is recorded in the trail and changes nothing. */
  async reportCheck(principal: Principal, id: string, batchId: string, dto: ReportCheckDto): Promise<MergeQueueBatchDto> {
    const { queue, outcome } = await this.store.apply({
      organizationId: principal.organizationId,
      queueId: id,
      build: ({ row, state }) => {
        const plannerBatch = state.batches.find((b) => batchRowId(row.id, b.id) === batchId);
        if (!plannerBatch) throw new AppError(MergeQueueErrors.BATCH_NOT_FOUND, { metadata: { id: batchId } });
        if (!state.config.requiredChecks.includes(dto.name)) {
          throw new AppError(MergeQueueErrors.CHECK_NOT_REQUIRED, { metadata: { name: dto.name, requiredChecks: state.config.requiredChecks }, details: [invalidFields([`data.name: is not a required check (${state.config.requiredChecks.join(', ')})`])] });
        }
        return [{ type: 'checkReported', batchId: plannerBatch.id, candidateSha: plannerBatch.candidateSha ?? '', name: dto.name, state: dto.state, at: Date.now() }];
      },
      detail: dto.url !== undefined ? { url: dto.url } : undefined,
      after: async (tx, { row }, applied) => {
        if (dto.url !== undefined && applied.changed) await tx.mergeQueueBatch.updateMany({ where: { id: batchId, queueId: row.id }, data: { checksUrl: dto.url } });
      },
    });
    await this.scheduler.afterCommit(id, queue.state, outcome.operations.length);
    const row = await this.prisma.mergeQueueBatch.findFirst({ where: { id: batchId, queueId: id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(MergeQueueErrors.BATCH_NOT_FOUND, { metadata: { id: batchId } });
    return toMergeQueueBatchDto(row);
  }

  async events(principal: Principal, id: string, query: PaginationQueryDto): Promise<Page<MergeQueueEventDto>> {
    // A bad cursor is a 400 whether or not the queue exists (as on every list).
    if (query.cursor !== undefined) decodeCursor(EVENTS, query.cursor);
    await this.findQueue(principal.organizationId, id);
    return paginate(fromModel(this.prisma.mergeQueueEvent, { organizationId: principal.organizationId, queueId: id }), EVENTS, query, toMergeQueueEventDto);
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

  /** The entry, live; a final one (even one the planner's history has dropped) is a 422, an unknown one a 404. */
  private async liveEntry({ row, state }: LockedQueue, entryId: string, tx: Prisma.TransactionClient) {
    const entry = state.entries.find((e) => e.id === entryId);
    if (!entry) {
      const stored = await tx.mergeQueueEntry.findFirst({ where: { id: entryId, queueId: row.id }, select: { status: true } });
      if (stored) throw new AppError(MergeQueueErrors.ENTRY_FINAL, { metadata: { id: entryId, status: stored.status } });
      throw new AppError(MergeQueueErrors.ENTRY_NOT_FOUND, { metadata: { id: entryId } });
    }
    if (FINAL_ENTRY_STATUSES.includes(entry.status)) throw new AppError(MergeQueueErrors.ENTRY_FINAL, { metadata: { id: entryId, status: entry.status } });
    return entry;
  }

  private async entry(organizationId: string, queueId: string, entryId: string): Promise<MergeQueueEntryDto> {
    const row = await this.prisma.mergeQueueEntry.findFirst({ where: { id: entryId, queueId, organizationId } });
    if (!row) throw new AppError(MergeQueueErrors.ENTRY_NOT_FOUND, { metadata: { id: entryId } });
    return toMergeQueueEntryDto(row);
  }

  private async findQueue(organizationId: string, id: string) {
    const row = await this.prisma.mergeQueue.findFirst({ where: { id, organizationId }, include: { repository: true } });
    if (!row) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id } });
    return row;
  }

  /** The spec's MergeQueue: live entries and batches, plus the RECENT_FINAL most recent final ones of each. */
  private async render(client: Prisma.TransactionClient | PrismaService, row: Awaited<ReturnType<MergeQueuesService['findQueue']>>): Promise<MergeQueueDto> {
    const id = row.id;
    const [liveEntries, finalEntries, liveBatches, finalBatches] = await Promise.all([
      client.mergeQueueEntry.findMany({ where: { queueId: id, status: { in: [...LIVE_ENTRY_STATUSES] } } }),
      client.mergeQueueEntry.findMany({ where: { queueId: id, status: { notIn: [...LIVE_ENTRY_STATUSES] } }, orderBy: [{ updatedAt: 'desc' }, { position: 'desc' }], take: RECENT_FINAL }),
      client.mergeQueueBatch.findMany({ where: { queueId: id, status: { in: [...LIVE_BATCH_STATUSES] } } }),
      client.mergeQueueBatch.findMany({ where: { queueId: id, status: { notIn: [...LIVE_BATCH_STATUSES] } }, orderBy: [{ updatedAt: 'desc' }, { position: 'desc' }], take: RECENT_FINAL }),
    ]);
    const entries = [...liveEntries, ...finalEntries].sort((a, b) => a.position - b.position);
    const batches = [...liveBatches, ...finalBatches].sort((a, b) => a.position - b.position);
    return toMergeQueueDto(row, entries, batches);
  }
}

/** The settings of a create or update request as planner tunables (seconds become milliseconds). */
function plannerSettings(dto: Partial<CreateMergeQueueDto>): QueueSettings {
  return {
    ...(dto.requiredChecks !== undefined && { requiredChecks: dto.requiredChecks }),
    ...(dto.minBatch !== undefined && { minBatch: dto.minBatch }),
    ...(dto.maxBatch !== undefined && { maxBatch: dto.maxBatch }),
    ...(dto.maxParallel !== undefined && { maxParallel: dto.maxParallel }),
    ...(dto.flakyRetries !== undefined && { flakyRetries: dto.flakyRetries }),
    ...(dto.checkTimeoutSeconds !== undefined && { checkTimeoutMs: dto.checkTimeoutSeconds * 1000 }),
  };
}

/** `If-Match: 12` or `If-Match: "12"`; anything else is not a revision and is refused as stale. */
function parseIfMatch(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '' || header.trim() === '*') return undefined;
  return header.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}
