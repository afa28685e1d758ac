import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '@/common/auth/auth.decorators';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { AppError } from '@/common/errors/app-error';
import { MergeQueueErrors } from '../merge-queues.errors';
import { QUEUE_PAGE_HEADERS, renderNotFoundPage } from './queue-page';
import { QueuePageService } from './queue-page.service';
import { QueuePageQueryDto } from './view-link.dto';

const PAGE = { 'text/html': { schema: { type: 'string' } } };

@ApiTags('merge-queues')
@Controller('view/merge-queues')
export class QueuePageController {
  constructor(private readonly page: QueuePageService) {}

  @Get(':id/:token')
  @Public()
  @ApiProduces('text/html')
  @ApiOperation({
    summary: "The merge queue's page (HTML, for a person's browser)",
    description:
      "What the Details link of every commit status the queue posts opens; no bearer token, the view link's token is in the path. Server-rendered HTML, no script: the chain as `queue show` draws it, the batches in flight and the PRs waiting as tables, the last landings, and with `?pr=N` that PR's place, state, expected merge time and why it is blocked or failed. " +
      'A token that was changed, has expired, was revoked or belongs to another queue gets the same 404, which shows nothing of the queue: a plain HTML page when the Accept header prefers text/html (a browser), the error body (`dpa:MergeQueue:VIEW_LINK_NOT_FOUND`) otherwise. Not cached (`Cache-Control: no-store`), no referrer sent (`Referrer-Policy: no-referrer`), the token never written to the logs. See docs/merge-queues-api.md, "The queue page".',
  })
  @ApiResponse({ status: 200, description: 'The page', content: PAGE })
  @ApiResponse({
    status: 404,
    description: 'The not-found page (HTML): the same for every link that does not open, naming nothing of the queue',
    content: PAGE,
  })
  @ApiErrors(MergeQueueErrors.VIEW_LINK_NOT_FOUND)
  async show(
    @Param('id') id: string,
    @Param('token') token: string,
    @Query() query: QueuePageQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const html = await this.page.render(id, token, query.pr);
    if (html !== null) {
      res.status(200).set(QUEUE_PAGE_HEADERS).send(html);
      return;
    }
    // A browser gets the plain page; any other client the error body (requestId and all), as on every route.
    if (req.accepts(['application/json', 'text/html']) !== 'text/html') throw new AppError(MergeQueueErrors.VIEW_LINK_NOT_FOUND);
    res.status(404).set(QUEUE_PAGE_HEADERS).send(renderNotFoundPage());
  }
}
