import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { ROW_ID } from '@/common/http/row-id';
import { decodeCursor, type Page, type PaginationQueryDto } from '@/common/pagination/pagination';
import type { MergeQueueViewLink } from '@/generated/prisma/client';
import { MergeQueueErrors } from '../merge-queues.errors';
import { type CreatedMergeQueueViewLinkDto, type CreateMergeQueueViewLinkDto, type MergeQueueViewLinkDto, toMergeQueueViewLinkDto } from './view-link.dto';
import { signViewLink, verifyViewLink, viewLinkKey } from './view-link-token';
import { MergeQueueViewLinksRepository, VIEW_LINKS_ORDER } from './view-links.repository';

const DAY_MS = 86_400_000;
/** Live links made with POST per queue; one more is a 422. */
export const MAX_LIVE_VIEW_LINKS = 100;
/** Where the page is served (outside the JSON API): `${VIEW_PATH}/{queueId}/{token}`. */
export const VIEW_PATH = '/view/merge-queues';

/**
 * Signed, expiring, revocable links to a merge queue's page (docs/merge-queues-api.md, "The queue
 * page"). Tokens are signed with a key derived from the first CREDENTIALS_KEYS key and verified
 * with each (so rotating the credential keys does not end links at once); they are never stored.
 * Used by the API (the view-links routes and the page) and the worker (the link its statuses carry).
 */
@Injectable()
export class MergeQueueViewLinks {
  private readonly signingKey: Buffer;
  private readonly verifyingKeys: Buffer[];

  constructor(
    private readonly links: MergeQueueViewLinksRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const { current, keys } = config.credentialKeys;
    this.signingKey = viewLinkKey(keys[current]);
    this.verifyingKeys = [
      this.signingKey,
      ...Object.entries(keys)
        .filter(([id]) => id !== current)
        .map(([, key]) => viewLinkKey(key)),
    ];
  }

  async create(principal: Principal, queueId: string, dto: CreateMergeQueueViewLinkDto): Promise<CreatedMergeQueueViewLinkDto> {
    const { organizationId } = principal;
    await this.queueOf(organizationId, queueId);
    const days = dto.expiresInDays ?? this.config.mergeQueues.viewLinkTtlDays;
    if (days > this.config.mergeQueues.viewLinkTtlDays)
      throw new AppError(MergeQueueErrors.VIEW_LINK_TOO_LONG, {
        metadata: { field: 'data.expiresInDays', maximum: this.config.mergeQueues.viewLinkTtlDays },
      });
    const now = new Date();
    if ((await this.links.countLiveShared(organizationId, queueId, now)) >= MAX_LIVE_VIEW_LINKS)
      throw new AppError(MergeQueueErrors.VIEW_LINK_LIMIT_REACHED, { metadata: { limit: MAX_LIVE_VIEW_LINKS } });
    const row = await this.links.create({
      organizationId,
      queueId,
      forStatuses: false,
      expiresAt: wholeSeconds(now.getTime() + days * DAY_MS),
      createdBy: principal.actorId,
    });
    return { ...toMergeQueueViewLinkDto(row), url: this.url(row) };
  }

  async list(principal: Principal, queueId: string, query: PaginationQueryDto): Promise<Page<MergeQueueViewLinkDto>> {
    // A bad cursor is a 400 whether or not the queue exists (as on every list).
    if (query.cursor !== undefined) decodeCursor(VIEW_LINKS_ORDER, query.cursor);
    await this.queueOf(principal.organizationId, queueId);
    return (await this.links.list(principal.organizationId, queueId, query, toMergeQueueViewLinkDto)) as Page<MergeQueueViewLinkDto>;
  }

  /** Revokes a link (again: nothing changes); the page it opened shows nothing from now on. A revoked status link is replaced on the next status. */
  async revoke(principal: Principal, queueId: string, linkId: string): Promise<MergeQueueViewLinkDto> {
    const { organizationId } = principal;
    await this.queueOf(organizationId, queueId);
    await this.links.revoke(organizationId, queueId, linkId, new Date());
    const row = await this.links.find(organizationId, queueId, linkId);
    if (!row) throw new AppError(MergeQueueErrors.VIEW_LINK_NOT_FOUND, { metadata: { id: linkId } });
    return toMergeQueueViewLinkDto(row);
  }

  /**
   * The page link the queue's commit statuses carry, pointing at PR `pr` when given: the queue's
   * status link, made on first use and again once less than half of MERGE_QUEUE_VIEW_LINK_TTL_DAYS
   * is left (or it was revoked). Two processes that make one at once each make one; both work.
   * The `npm start` demo prints it too.
   */
  async statusLink(organizationId: string, queueId: string, pr?: number): Promise<string> {
    const ttl = this.config.mergeQueues.viewLinkTtlDays * DAY_MS;
    const now = Date.now();
    const row =
      (await this.links.statusLink(organizationId, queueId, new Date(now + ttl / 2))) ??
      (await this.links.create({ organizationId, queueId, forStatuses: true, expiresAt: wholeSeconds(now + ttl), createdBy: null }));
    return this.url(row, pr);
  }

  /**
   * The organization whose queue a page token opens, or null when the token was changed, has
   * expired, was revoked or names another queue: every one of these is the same null.
   */
  async open(queueId: string, token: string): Promise<{ organizationId: string } | null> {
    if (!ROW_ID.test(queueId)) return null;
    const now = new Date();
    const claims = verifyViewLink(this.verifyingKeys, token, queueId, now);
    if (!claims) return null;
    return this.links.live(claims.linkId, queueId, claims.expiresAt, now);
  }

  private url(row: MergeQueueViewLink, pr?: number): string {
    const token = signViewLink(this.signingKey, { linkId: row.id, queueId: row.queueId, expiresAt: row.expiresAt });
    return `${this.config.git.publicUrl}${VIEW_PATH}/${row.queueId}/${token}${pr === undefined ? '' : `?pr=${pr}`}`;
  }

  private async queueOf(organizationId: string, queueId: string): Promise<void> {
    if (!(await this.links.queueExists(organizationId, queueId))) throw new AppError(MergeQueueErrors.NOT_FOUND, { metadata: { id: queueId } });
  }
}

/** The token carries whole seconds: the row's expiry is one. */
function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}
