import { Injectable } from '@nestjs/common';
import { fromModel, newestFirst, type Page, paginate, type PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { MergeQueueViewLink } from '@/generated/prisma/client';

export const VIEW_LINKS_ORDER = newestFirst<MergeQueueViewLink>('mergeQueueViewLinks');

/** Every statement on merge queue view links; each takes the organization id, but `live`, which the token itself scopes. */
@Injectable()
export class MergeQueueViewLinksRepository {
  constructor(private readonly prisma: PrismaService) {}

  async queueExists(organizationId: string, queueId: string): Promise<boolean> {
    return (await this.prisma.mergeQueue.count({ where: { id: queueId, organizationId } })) > 0;
  }

  create(link: { organizationId: string; queueId: string; forStatuses: boolean; expiresAt: Date; createdBy: string | null }): Promise<MergeQueueViewLink> {
    return this.prisma.mergeQueueViewLink.create({ data: link });
  }

  /** Links made with POST that still work: bounded per queue. */
  countLiveShared(organizationId: string, queueId: string, now: Date): Promise<number> {
    return this.prisma.mergeQueueViewLink.count({ where: { organizationId, queueId, forStatuses: false, revokedAt: null, expiresAt: { gt: now } } });
  }

  /** The newest status link that works past `until`, if any. */
  statusLink(organizationId: string, queueId: string, until: Date): Promise<MergeQueueViewLink | null> {
    return this.prisma.mergeQueueViewLink.findFirst({
      where: { organizationId, queueId, forStatuses: true, revokedAt: null, expiresAt: { gt: until } },
      orderBy: [{ expiresAt: 'desc' }, { id: 'desc' }],
    });
  }

  list(organizationId: string, queueId: string, query: PaginationQueryDto, map: (row: MergeQueueViewLink) => unknown): Promise<Page<unknown>> {
    return paginate(fromModel(this.prisma.mergeQueueViewLink, { organizationId, queueId }), VIEW_LINKS_ORDER, query, map);
  }

  find(organizationId: string, queueId: string, id: string): Promise<MergeQueueViewLink | null> {
    return this.prisma.mergeQueueViewLink.findFirst({ where: { id, organizationId, queueId } });
  }

  /** Revokes the link unless it already is; the number of rows changed. */
  async revoke(organizationId: string, queueId: string, id: string, at: Date): Promise<number> {
    return (await this.prisma.mergeQueueViewLink.updateMany({ where: { id, organizationId, queueId, revokedAt: null }, data: { revokedAt: at } })).count;
  }

  /** The link a verified token names, if it is neither revoked nor expired (its expiry is the one the token carries). */
  live(id: string, queueId: string, expiresAt: Date, now: Date): Promise<Pick<MergeQueueViewLink, 'organizationId' | 'queueId'> | null> {
    return this.prisma.mergeQueueViewLink.findFirst({
      where: { id, queueId, expiresAt: { equals: expiresAt, gt: now }, revokedAt: null },
      select: { organizationId: true, queueId: true },
    });
  }
}
