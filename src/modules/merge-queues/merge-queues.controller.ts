import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtraModels, ApiHeader, ApiOperation, ApiProduces, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { XML_MEDIA_TYPES } from '@/common/http/body-guard';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import {
  CreateMergeQueueEntryRequest,
  CreateMergeQueueRequest,
  MergeQueueChainDto,
  MergeQueueBatchDto,
  MergeQueueDto,
  MergeQueueEntryDto,
  MergeQueueEventDto,
  ReportCheckRequest,
  ReportJunitQueryDto,
  UpdateMergeQueueEntryRequest,
  UpdateMergeQueueRequest,
} from './dto/merge-queue.dto';
import { CodeSourceErrors } from '@/modules/code-sources/code-sources.errors';
import { GitProviderErrors, PROVIDER_CALL_ERRORS } from '@/modules/git-providers/git-providers.errors';
import { MergeQueueBatchDetailsDto, MergeQueueFailFirstDto } from './dto/merge-queue-batch-details.dto';
import { MergeQueueEntryDetailsDto } from './dto/merge-queue-entry-details.dto';
import { MergeQueueSettingsDto, UpdateMergeQueueSettingsRequest } from './dto/merge-queue-settings.dto';
import { JUNIT_BODY_MAX_BYTES } from './check-reports/junit-route';
import { MergeQueueErrors } from './merge-queues.errors';
import { MergeQueuesService } from './merge-queues.service';
import { failFirstText } from './planner';

const IF_MATCH = ApiHeader({
  name: 'If-Match',
  required: false,
  description: 'The revision you last saw; when the queue has moved on since, the request is refused with a 409 and changes nothing',
});

/**
 * Reading through the code source's provider (a base ref on POST and PATCH; a PR's changed paths
 * when an entry is added or gets a new head on a queue with path groups): its integration and the
 * provider's answers.
 */
const PROVIDER_LOOKUP_ERRORS = [
  CodeSourceErrors.INTEGRATION_NOT_FOUND,
  GitProviderErrors.INTEGRATION_NEEDS_ATTENTION,
  GitProviderErrors.LOCAL_GIT_DISABLED,
  GitProviderErrors.REPOSITORY_NOT_FOUND,
  ...PROVIDER_CALL_ERRORS,
];

/** Reading GitHub's required checks (requiredChecksFrom: branchProtection): the code source's integration and GitHub's answers. */
const GITHUB_CHECKS_READ_ERRORS = [
  CodeSourceErrors.INTEGRATION_NOT_FOUND,
  GitProviderErrors.INTEGRATION_NEEDS_ATTENTION,
  GitProviderErrors.REPOSITORY_NOT_FOUND,
  ...PROVIDER_CALL_ERRORS,
];

@ApiTags('merge-queues')
@Controller('merge-queues')
export class MergeQueuesController {
  constructor(private readonly queues: MergeQueuesService) {}

  @Post()
  @RequirePermission(Permission.MergeQueuesOperate)
  @ApiOperation({
    summary: 'Create a merge queue',
    description:
      "One queue per repository and base ref. The base ref must exist in the code source. LOCAL_GIT, GITHUB and GITHUB_ENTERPRISE code sources are supported (GitHub through the code source's integration, whose token needs write access to the repository's contents); GITLAB is refused with a 422. " +
      'With `settings.requiredChecksFrom: branchProtection` (GitHub only) `requiredChecks` is omitted: the checks GitHub requires on the base branch (its protection rule and rulesets) are read now, a 422 when it requires none.',
  })
  @ApiDataResponse(MergeQueueDto, { status: 201 })
  @ApiErrors(
    MergeQueueErrors.CODE_SOURCE_NOT_FOUND,
    MergeQueueErrors.PROVIDER_NOT_SUPPORTED,
    MergeQueueErrors.BASE_REF_NOT_FOUND,
    MergeQueueErrors.INVALID_SETTINGS,
    MergeQueueErrors.ALREADY_EXISTS,
    MergeQueueErrors.QUEUE_LIMIT_REACHED,
    MergeQueueErrors.NO_CHECKS_ON_GITHUB,
    MergeQueueErrors.CHECKS_FROM_GITHUB,
    CodeSourceErrors.NOT_IN_INSTALLATION,
    ...PROVIDER_LOOKUP_ERRORS,
  )
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateMergeQueueRequest) {
    return { data: await this.queues.create(principal, body.data) };
  }

  @Get()
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({ summary: "List the organization's merge queues", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(MergeQueueDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.queues.list(principal, query);
  }

  @Get(':id')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({ summary: 'Get a merge queue', description: 'Live entries and batches, plus the 20 most recent final ones of each.' })
  @ApiDataResponse(MergeQueueDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.queues.get(principal, id) };
  }

  @Patch(':id')
  @RequirePermission(Permission.MergeQueuesOperate)
  @IF_MATCH
  @ApiOperation({
    summary: "Change a merge queue's settings or base ref",
    description:
      'Settings apply to what is planned next; new `requiredChecks` withdraw the batches that are not already landing and plan their PRs again. ' +
      'A new `baseRef` must exist: the queue becomes `migrating` (like paused: CI results are recorded, nothing new is planned or landed), a land already in flight finishes on the old ref, ' +
      'then the worker moves the queue to the new ref and plans everything not yet landed on it again (the event trail shows `migrate` and `migrated`). A paused queue stays paused; a disabled queue moves the same way once nothing is landing.',
  })
  @ApiDataResponse(MergeQueueDto)
  @ApiErrors(
    MergeQueueErrors.NOT_FOUND,
    MergeQueueErrors.BASE_REF_NOT_FOUND,
    MergeQueueErrors.INVALID_SETTINGS,
    MergeQueueErrors.ALREADY_EXISTS,
    MergeQueueErrors.REVISION_MISMATCH,
    MergeQueueErrors.CHECKS_FROM_GITHUB,
    ...PROVIDER_LOOKUP_ERRORS,
  )
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: UpdateMergeQueueRequest,
    @Headers('if-match') ifMatch?: string,
  ) {
    return { data: await this.queues.update(principal, id, body.data, ifMatch) };
  }

  @Get(':id/settings')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({
    summary: "A merge queue's own settings",
    description:
      'The required checks with where each must come from (`source`, `app`), what a push to a queued PR does (`onHeadPush`) and whether skipped or neutral checks pass (`skippedPasses`). ' +
      "The planner's tunables (batch bounds, parallelism, timeouts, path groups) are on the queue itself (PATCH /merge-queues/{id}). " +
      'With `requiredChecksFrom: branchProtection` each required check lists the GitHub rules that require it (`from`: the protection rule, rulesets), and `requiredChecksRead` says when GitHub was last read and the last read that failed.',
  })
  @ApiDataResponse(MergeQueueSettingsDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND)
  async settings(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.queues.settings(principal, id) };
  }

  @Patch(':id/settings')
  @RequirePermission(Permission.MergeQueuesOperate)
  @IF_MATCH
  @ApiOperation({
    summary: "Change a merge queue's own settings",
    description:
      'Only the fields given change. `requiredChecks` replaces the required checks and their sources: new names go through the planner like `requiredChecks` on PATCH /merge-queues/{id} (batches not already landing are withdrawn); sources apply to the next result. ' +
      'On a queue whose CI reports by commit status, set `{name, source: "status"}`: until then its statuses do not count, the candidate fails at the check timeout with the reason, and each status not counted is in the events.',
  })
  @ApiDataResponse(MergeQueueSettingsDto)
  @ApiErrors(
    MergeQueueErrors.NOT_FOUND,
    MergeQueueErrors.INVALID_SETTINGS,
    MergeQueueErrors.REVISION_MISMATCH,
    MergeQueueErrors.CHECKS_FROM_GITHUB,
    MergeQueueErrors.NO_CHECKS_ON_GITHUB,
    ...GITHUB_CHECKS_READ_ERRORS,
  )
  async updateSettings(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: UpdateMergeQueueSettingsRequest,
    @Headers('if-match') ifMatch?: string,
  ) {
    return { data: await this.queues.updateSettings(principal, id, body.data, ifMatch) };
  }

  @Post(':id/settings/required-checks/refresh')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesOperate)
  @ApiOperation({
    summary: 'Read the checks GitHub requires again',
    description:
      'For a queue with `requiredChecksFrom: branchProtection`: reads the checks GitHub requires on the base branch (its protection rule and the rulesets that apply to it) now, as the `branch_protection_rule` and `repository_ruleset` webhooks do, ' +
      'and answers with the settings. New names go through the planner as a PATCH of `requiredChecks` does (batches not already landing are withdrawn). ' +
      "A read that fails keeps the last known checks, is recorded in the events and in the settings' `requiredChecksRead.failed`, and answers as the provider failed (502, 503, 424...); GitHub requiring no check keeps them too and is a 422. " +
      'A queue whose checks come from its settings is a 422.',
  })
  @ApiDataResponse(MergeQueueSettingsDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.CHECKS_NOT_FROM_GITHUB, MergeQueueErrors.NO_CHECKS_ON_GITHUB, ...GITHUB_CHECKS_READ_ERRORS)
  async refreshRequiredChecks(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.queues.refreshRequiredChecks(principal, id) };
  }

  @Get(':id/chain')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({
    summary: 'The chain and the waiting entries, with estimates',
    description:
      'What `node dist/cli.js queue show <id>` draws: the live batches in the order they land (role, the batch each is built on, checks, when it was planned and when its CI started, when it is expected to land) ' +
      'and the entries not yet in a batch in planning order, with their expected merge time. Estimates come from the observed CI duration and failure rate; blocked and set-aside entries have none.',
  })
  @ApiDataResponse(MergeQueueChainDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND)
  async chain(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.queues.chain(principal, id) };
  }

  @Post(':id/pause')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesOperate)
  @IF_MATCH
  @ApiOperation({
    summary: 'Pause a merge queue',
    description:
      'Stops planning and landing; CI runs that already exist finish and their results are recorded. Pausing a paused queue changes nothing. During a base-ref move (status `migrating`, which already holds planning and landing) the pause is remembered: the 200 body still shows `migrating` (with a new `revision`), and the queue is `paused` when the move completes; a resume sent before then takes it back.',
  })
  @ApiDataResponse(MergeQueueDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.DISABLED, MergeQueueErrors.REVISION_MISMATCH)
  async pause(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Headers('if-match') ifMatch?: string) {
    return { data: await this.queues.control(principal, id, 'pause', ifMatch) };
  }

  @Post(':id/resume')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesOperate)
  @IF_MATCH
  @ApiOperation({
    summary: 'Resume a paused merge queue',
    description:
      "Ready batches land in order and planning continues. During a base-ref move (status `migrating`) a resume takes back a pause sent before or during the move, so the queue plans again once the move completes. Resuming a queue that is neither paused nor to be paused changes nothing. A queue that stopped by itself (a land the provider refused for good, a quarantine after failures in a row: the reason is in the events and on the affected entries' `block`) is resumed the same way: the reason is cleared, the failures in a row start again from zero, and a refused land is tried again once.",
  })
  @ApiDataResponse(MergeQueueDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.DISABLED, MergeQueueErrors.REVISION_MISMATCH)
  async resume(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Headers('if-match') ifMatch?: string) {
    return { data: await this.queues.control(principal, id, 'resume', ifMatch) };
  }

  @Post(':id/disable')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesOperate)
  @IF_MATCH
  @ApiOperation({
    summary: 'Disable a merge queue',
    description: 'Withdraws every batch in flight (a land already in flight finishes first); entries stay queued.',
  })
  @ApiDataResponse(MergeQueueDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.REVISION_MISMATCH)
  async disable(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Headers('if-match') ifMatch?: string) {
    return { data: await this.queues.control(principal, id, 'disable', ifMatch) };
  }

  @Post(':id/enable')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesOperate)
  @IF_MATCH
  @ApiOperation({ summary: 'Enable a disabled merge queue' })
  @ApiDataResponse(MergeQueueDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.REVISION_MISMATCH)
  async enable(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Headers('if-match') ifMatch?: string) {
    return { data: await this.queues.control(principal, id, 'enable', ifMatch) };
  }

  @Post(':id/entries')
  @RequirePermission(Permission.MergeQueueEntriesWrite)
  @ApiOperation({
    summary: 'Add a pull request to the queue',
    description:
      "The same PR number cannot be in the queue twice while live. On a GitHub queue the worker then reads the PR's title from GitHub (GET /merge-queues/{id}/entries/{entryId}/details shows it and its source); the title given here is shown until then, and the answer never waits for GitHub. On a queue with path groups the PR's changed paths are asked from the provider (from the merge base with the queue's base) and the entry gets its `lanes`; a provider that fails is an error here, and nothing is queued.",
  })
  @ApiDataResponse(MergeQueueEntryDto, { status: 201 })
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.ENTRY_EXISTS, MergeQueueErrors.ENTRY_LIMIT_REACHED, ...PROVIDER_LOOKUP_ERRORS)
  async enqueue(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: CreateMergeQueueEntryRequest) {
    return { data: await this.queues.enqueue(principal, id, body.data) };
  }

  @Patch(':id/entries/:entryId')
  @RequirePermission(Permission.MergeQueueEntriesWrite)
  @ApiOperation({
    summary: 'Change an entry',
    description:
      '`priority`, `setAside`, or a new `headSha` (tested again from scratch; unblocks a blocked entry; on a queue with path groups its changed paths and `lanes` are asked again). While its batch is landing, a new head applies only if the land does not happen.',
  })
  @ApiDataResponse(MergeQueueEntryDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.ENTRY_NOT_FOUND, MergeQueueErrors.ENTRY_FINAL, ...PROVIDER_LOOKUP_ERRORS)
  async updateEntry(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('entryId') entryId: string,
    @Body() body: UpdateMergeQueueEntryRequest,
  ) {
    return { data: await this.queues.updateEntry(principal, id, entryId, body.data) };
  }

  @Get(':id/entries/:entryId/details')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({
    summary: "An entry's details",
    description:
      "The spec's entry (`entry`, exactly as GET /merge-queues/{id} lists it) and what that closed object does not carry: how it came and who asked (`origin`: the API, the queue's label or a `/queue` comment), " +
      'its title and where it came from (`titleSource`: the caller, or GitHub), its lanes on a queue with path groups (`lanes`, `pathsStatus`, `lanesReason`, `pathsCount`), the batch it is in, and the newest events of the queue that concern it. ' +
      'Final entries too (merged, removed, failed), as long as the queue keeps them.',
  })
  @ApiDataResponse(MergeQueueEntryDetailsDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.ENTRY_NOT_FOUND)
  async entryDetails(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('entryId') entryId: string) {
    return { data: await this.queues.entryDetails(principal, id, entryId) };
  }

  @Get(':id/batches/:batchId/details')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({
    summary: "A batch's details",
    description:
      "The spec's batch (`batch`, exactly as GET /merge-queues/{id} lists it) and what that closed object does not carry: its role (`chain`, `part`: a probe of a failed batch or a PR's solo run, `screen`), the batch and commit it is built on, its candidate commit, " +
      'the failing tests CI named for it (`failures`, `failuresTruncated`), the suspects its candidate holds with the failing tests that made each one (`suspects`), and the tests to run first (`failFirst`: fail-first hints). ' +
      'Final batches too, as long as the queue keeps them; once its history drops a batch, `role` is null and the lists are empty. See docs/merge-queues-api.md, "Fail-first hints".',
  })
  @ApiDataResponse(MergeQueueBatchDetailsDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.BATCH_NOT_FOUND)
  async batchDetails(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('batchId') batchId: string) {
    return { data: await this.queues.batchDetails(principal, id, batchId) };
  }

  @Get(':id/commits/:sha/fail-first')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({
    summary: 'The tests to run first on a candidate commit (fail-first hints, for CI)',
    description:
      'For CI testing a candidate (a push to `mq/{queueId}/...`): the tests that made a PR the candidate holds a suspect, to run before the rest so that a run holding a culprit fails early. The batch is the newest of the queue whose candidate is `sha`. ' +
      "`tests` is empty when the candidate holds no suspect (run the suite as usual). With `Accept: text/plain` the answer is the tests' names, one a line (empty when there is none), to hand to a test runner. " +
      'A commit that is no candidate of the queue (a rebuilt batch has a new one) is a 404 `dpa:MergeQueue:CANDIDATE_NOT_FOUND`: run everything. See docs/merge-queues-api.md, "Fail-first hints", for a GitHub Actions step.',
  })
  @ApiExtraModels(MergeQueueFailFirstDto)
  @ApiProduces('application/json', 'text/plain')
  @ApiResponse({
    status: 200,
    description: 'The hints: `{data}` as JSON, or one test name a line with `Accept: text/plain`',
    content: {
      'application/json': { schema: { type: 'object', required: ['data'], properties: { data: { $ref: getSchemaPath(MergeQueueFailFirstDto) } } } },
      'text/plain': { schema: { type: 'string' } },
    },
  })
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.CANDIDATE_NOT_FOUND)
  async failFirst(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('sha') sha: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ) {
    const hints = await this.queues.failFirst(principal, id, sha);
    res.vary('Accept');
    if (req.accepts(['application/json', 'text/plain']) === 'text/plain') {
      res.type('text/plain; charset=utf-8');
      return failFirstText(hints.tests);
    }
    return { data: hints };
  }

  @Delete(':id/entries/:entryId')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueueEntriesWrite)
  @ApiOperation({ summary: 'Remove an entry', description: 'The entry becomes `removed`; while its batch is landing, only if the land does not happen.' })
  @ApiDataResponse(MergeQueueEntryDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND, MergeQueueErrors.ENTRY_NOT_FOUND, MergeQueueErrors.ENTRY_FINAL)
  async removeEntry(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('entryId') entryId: string) {
    return { data: await this.queues.removeEntry(principal, id, entryId) };
  }

  @Post(':id/batches/:batchId/checks')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesReportChecks)
  @ApiOperation({
    summary: 'Report a required check on a batch candidate',
    description:
      "`sha` is the candidate commit CI tested. A result for the batch's current candidate is recorded; one that arrives before the batch is testing that commit (CI saw the pushed candidate first) is kept and applied once it is. " +
      "A result for another commit is recorded in the events, changes nothing, and is answered 409 with the batch's current candidate in `metadata.candidateSha`. A result for a withdrawn or final batch is recorded in the events and changes nothing. `url` becomes the batch's `checksUrl`. " +
      "A passing result lets the queue land with the integration's write token, so this needs `mergeQueues:reportChecks` (ADMIN and above): give CI a service-account key scoped to it. " +
      "A report counts for every required check except one the queue binds to a GitHub App (`{name, app}` in its settings): that one is refused with a 422, only the app's check runs count for it.",
  })
  @ApiDataResponse(MergeQueueBatchDto)
  @ApiErrors(
    MergeQueueErrors.NOT_FOUND,
    MergeQueueErrors.BATCH_NOT_FOUND,
    MergeQueueErrors.CHECK_NOT_REQUIRED,
    MergeQueueErrors.CHECK_SOURCE_BOUND,
    MergeQueueErrors.CHECK_NOT_FOR_CANDIDATE,
  )
  async reportCheck(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Param('batchId') batchId: string, @Body() body: ReportCheckRequest) {
    return { data: await this.queues.reportCheck(principal, id, batchId, body.data) };
  }

  @Post(':id/batches/:batchId/checks/junit')
  @HttpCode(200)
  @RequirePermission(Permission.MergeQueuesReportChecks)
  @ApiOperation({
    summary: 'Report a required check on a batch candidate as a JUnit XML report',
    description:
      'The body is the JUnit XML report of the check (`application/xml` or `text/xml`, UTF-8, up to 5 MB, compressed or not); `name` and `sha` are in the query and bound to the candidate exactly as on POST .../checks ' +
      "(a result for another commit is answered 409 with the batch's current candidate in `metadata.candidateSha` and changes nothing). " +
      'The report is the whole result of the check: a test case with a `<failure>` or an `<error>` fails the check, and its failing tests are kept as `failures` of that report (the first 50: `classname.name` as the test, `file`, `failure` or `error` as the kind); ' +
      'otherwise the check passes. A report in which no test case ran (none, or every one skipped) is a 422 and changes nothing; a CI that splits a check into shards merges their reports first, or reports on POST .../checks. ' +
      'A DOCTYPE is refused (no DTD, no entity is read): the report is a 400 naming where, as is XML that is not well-formed or not UTF-8.',
  })
  @ApiConsumes(...XML_MEDIA_TYPES)
  @ApiBody({
    required: true,
    description: 'A JUnit XML report: a `<testsuites>` or `<testsuite>` root',
    schema: {
      type: 'string',
      maxLength: JUNIT_BODY_MAX_BYTES,
      example: '<testsuite name="api"><testcase classname="login" name="rejects a bad password"><failure/></testcase></testsuite>',
    },
  })
  @ApiDataResponse(MergeQueueBatchDto)
  @ApiErrors(
    MergeQueueErrors.NOT_FOUND,
    MergeQueueErrors.BATCH_NOT_FOUND,
    MergeQueueErrors.CHECK_NOT_REQUIRED,
    MergeQueueErrors.CHECK_SOURCE_BOUND,
    MergeQueueErrors.CHECK_NOT_FOR_CANDIDATE,
    MergeQueueErrors.JUNIT_NO_TESTS,
  )
  async reportJunit(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('batchId') batchId: string,
    @Query() query: ReportJunitQueryDto,
    @Req() req: Request,
  ) {
    return { data: await this.queues.reportJunit(principal, id, batchId, query, req.body) };
  }

  @Get(':id/events')
  @RequirePermission(Permission.MergeQueuesRead)
  @ApiOperation({
    summary: "The queue's event trail",
    description:
      'Every event applied (requests, CI results, operation outcomes, ticks that changed something), with the status steps and operations it caused. Newest first; paginated.',
  })
  @ApiPageResponse(MergeQueueEventDto)
  @ApiErrors(MergeQueueErrors.NOT_FOUND)
  events(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: PaginationQueryDto) {
    return this.queues.events(principal, id, query);
  }
}
