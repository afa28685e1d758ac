import { Controller, Headers, HttpCode, Post, Query, Req } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { Public } from '@/common/auth/auth.decorators';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse } from '@/common/http/envelope';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { WebhookReceiptDto } from './webhook-delivery.dto';
import { WebhookErrors } from './webhooks.errors';
import { WebhooksService } from './webhooks.service';

/** A webhook request: its body is the raw bytes (see bootstrap.ts), verified and then parsed once by the service. */
export type RawBodyRequest = Request & { body?: unknown };

@ApiTags('webhooks')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post('github')
  @HttpCode(202)
  @Public()
  @RateLimit('webhooks')
  @ApiOperation({
    summary: 'Receive a GitHub webhook delivery',
    description:
      "Called by GitHub (the GitHub App's webhook, or a repository's webhook, content type `application/json`, up to 25 MB as GitHub sends: `WEBHOOK_BODY_MAX_BYTES`, `WEBHOOK_BODY_MAX_KEYS`); no bearer token. The delivery is verified with HMAC SHA-256 of the raw body (`X-Hub-Signature-256`, compared in constant time): against the GitHub App's secret (`GITHUB_APP_WEBHOOK_SECRET`, and `GITHUB_APP_WEBHOOK_SECRET_PREVIOUS` during a rotation), then it applies to every GITHUB integration of its `installation.id`, in every organization; with `?integration=<id>`, against that integration's own webhook secret; otherwise against the own secret of every integration it may belong to, by `installation.id` and by `repository.id` (never the repository's name), up to 1 MB. An unsigned, wrongly signed or unknown delivery is a 401 and changes nothing. A delivery whose own timestamp is older than GitHub redelivers (3 days on github.com, 7 on GitHub Enterprise Server) is a 422 (a replay). Over the organization's budget (`WEBHOOK_ORG_DELIVERIES_PER_MINUTE`, `WEBHOOK_ORG_PENDING_MAX`) it is a 429 with `Retry-After` and nothing is stored. A verified one is stored once per integration and `X-GitHub-Delivery` (a redelivery answers `duplicate: true` and is not applied again) and answered 202 at once; the worker applies it. Events acted on: `pull_request` synchronize (by the queue's `onHeadPush` setting: the PR is removed, the default, or queued again with the new head only when GitHub says that head is approved; the old head never lands) and closed (it leaves the queue); `check_run` completed and `status` on a candidate commit (a required check's result, counted only from the source the queue's settings name: check runs of any app or of one app, or commit statuses; `skipped` and `neutral` count only with `skippedPasses`; other results are recorded in the events and change nothing); `check_suite` is recorded and never counts; `push` to a queue's base from outside the queue (the queue re-plans on the new base); `pull_request` labeled / unlabeled with a queue's `enqueueLabel`, and `issue_comment` created on a PR whose first line is `/queue` or `/dequeue` (unless the queue's `commentCommands` is false; never a bot's): the PR is queued (its head and title as GitHub answers them then) or removed, only for someone GitHub says has write permission and, to queue, an open, non-draft PR on the queue's base, approved when the queue's `requireApproval` says so; every refusal is answered with a comment on the PR; `installation` deleted (the integration becomes REVOKED) or suspend (NEEDS_ATTENTION). Other events are accepted and ignored. See docs/webhooks.md.",
  })
  @ApiHeader({ name: 'X-Hub-Signature-256', required: true, description: '`sha256=` and the hex HMAC SHA-256 of the body under the webhook secret' })
  @ApiHeader({ name: 'X-GitHub-Event', required: true, description: 'The event name, e.g. pull_request' })
  @ApiHeader({ name: 'X-GitHub-Delivery', required: true, description: 'The delivery GUID; a redelivery carries the same one' })
  @ApiQuery({
    name: 'integration',
    required: false,
    description: "The integration whose own webhook secret signs the deliveries (a repository webhook's URL): only its secret is compared",
  })
  @ApiDataResponse(WebhookReceiptDto, { status: 202, description: 'Verified and stored; applied by the worker' })
  @ApiErrors(
    WebhookErrors.SIGNATURE_INVALID,
    WebhookErrors.INTEGRATION_URL_REQUIRED,
    WebhookErrors.HEADER_MISSING,
    WebhookErrors.DELIVERY_EXPIRED,
    WebhookErrors.BUDGET_EXCEEDED,
  )
  async github(
    @Req() req: RawBodyRequest,
    @Headers('x-hub-signature-256') signature: string | undefined,
    @Headers('x-github-event') event: string | undefined,
    @Headers('x-github-delivery') deliveryId: string | undefined,
    @Query('integration') integration: unknown,
  ) {
    const rawBody = Buffer.isBuffer(req.body) ? req.body : undefined;
    const integrationId = typeof integration === 'string' ? integration : integration === undefined ? undefined : '';
    return { data: await this.webhooks.receiveGithub({ signature, event, deliveryId }, rawBody, integrationId) };
  }
}
