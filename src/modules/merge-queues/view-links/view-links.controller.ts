import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { NoStore } from '@/common/http/no-store';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { MergeQueueErrors } from '../merge-queues.errors';
import { CreatedMergeQueueViewLinkDto, CreateMergeQueueViewLinkRequest, MergeQueueViewLinkDto } from './view-link.dto';
import { MergeQueueViewLinks } from './view-links.service';

@ApiTags('merge-queues')
@Controller('merge-queues')
export class MergeQueueViewLinksController {
  constructor(private readonly links: MergeQueueViewLinks) {}

  @Post(':id/view-links')
  @RequirePermission(Permission.MergeQueuesOperate)
  @NoStore()
  @ApiOperation({
    summary: "Make a link to the queue's page",
    description:
      "A signed link to GET /view/merge-queues/{id}/{token}: the queue's page, readable with no API token by anyone holding the link, until it expires (`expiresInDays`, at most MERGE_QUEUE_VIEW_LINK_TTL_DAYS) or is revoked. The `url` is shown once and never stored. " +
      'The queue\'s commit statuses carry a link of their own (`forStatuses`), made and renewed by the queue. A queue holds at most 100 live links made here. See docs/merge-queues-api.md, "The queue page", for who can see a link and what it shows.',
  })
  @ApiDataResponse(CreatedMergeQueueViewLinkDto, { status: 201 })
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.VIEW_LINK_TOO_LONG, MergeQueueErrors.VIEW_LINK_LIMIT_REACHED)
  async create(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: CreateMergeQueueViewLinkRequest) {
    return { data: await this.links.create(principal, id, body.data) };
  }

  @Get(':id/view-links')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({
    summary: "The queue's view links",
    description: "Every link to the queue's page, the status link included, newest first; paginated. Never their token or URL.",
  })
  @ApiPageResponse(MergeQueueViewLinkDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND)
  list(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: PaginationQueryDto) {
    return this.links.list(principal, id, query);
  }

  @Delete(':id/view-links/:linkId')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesOperate)
  @ApiOperation({
    summary: 'Revoke a view link',
    description:
      'From now on the link shows the not-found page, as a changed or expired one does. Revoking the status link (`forStatuses`) ends every link the statuses posted so far carry; the next status the queue posts carries a new one. Revoking a revoked link changes nothing.',
  })
  @ApiDataResponse(MergeQueueViewLinkDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.VIEW_LINK_NOT_FOUND)
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('linkId') linkId: string) {
    return { data: await this.links.revoke(principal, id, linkId) };
  }
}
