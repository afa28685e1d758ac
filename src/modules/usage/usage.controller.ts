import { Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { UsageDayDto, UsageImportDto, UsageImportStartedDto, UsageQueryDto } from './dto/usage.dto';
import { UsageErrors } from './usage.errors';
import { UsageService } from './usage.service';

@ApiTags('usage')
@Controller('scm/actions/usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Post('import')
  @HttpCode(202)
  @RequirePermission(Permission.UsageImport)
  @RateLimit('usageImport')
  @ApiOperation({
    summary: 'Start usage import',
    description:
      "Starts a background import of CI usage history (GitHub Actions workflow runs and jobs) for every connected code source: repositories of the organization's ACTIVE GitHub and GitHub Enterprise integrations. " +
      'Answers at once with **202 Accepted**: the history downloads in the worker; follow it with `GET /scm/actions/usage/imports`. ' +
      "Idempotent: a code source whose import is waiting, running or delayed by the provider's rate limit is not started again (across every API process), so a second call right after the first answers `started: 0`. " +
      "`retryAfterSeconds` and `stale` sit beside `data`, not inside it: `retryAfterSeconds` is how long to wait before asking again (USAGE_IMPORT_COOLDOWN_SECONDS, or the provider's rate-limit reset when that is later); " +
      '`stale` is true when some connected code source has no successful import finished within USAGE_IMPORT_FRESHNESS_MS. A Redis that cannot take the jobs is a 503 within REDIS_COMMAND_TIMEOUT_MS.',
  })
  @ApiExtraModels(UsageImportStartedDto)
  @ApiAcceptedResponse({
    description: 'Imports enqueued (or already under way)',
    schema: {
      type: 'object',
      required: ['data', 'retryAfterSeconds', 'stale'],
      additionalProperties: false,
      properties: {
        data: { $ref: getSchemaPath(UsageImportStartedDto) },
        retryAfterSeconds: { type: 'integer', minimum: 0, description: 'Seconds to wait before asking again' },
        stale: { type: 'boolean', description: 'Some connected code source has no recent successful import' },
      },
    },
  })
  startImport(@CurrentPrincipal() principal: Principal) {
    return this.usage.startImports(principal);
  }

  @Get('imports')
  @RequirePermission(Permission.UsageRead)
  @ApiOperation({
    summary: 'List usage imports',
    description: 'Newest first, with status, progress (pages, the checkpoint) and counts; paginated with `cursor` and `limit`.',
  })
  @ApiPageResponse(UsageImportDto)
  listImports(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.usage.listImports(principal, query);
  }

  @Get()
  @RequirePermission(Permission.UsageRead)
  @ApiOperation({
    summary: 'CI usage per code source, workflow and day',
    description:
      "Imported usage aggregated (in Postgres) per code source, workflow and UTC day of the runs' creation: runs, jobs, and billable minutes per runner OS. Filters `codeSourceId`, `from`, `to` (inclusive UTC days). Newest day first; paginated with `cursor` and `limit`.",
  })
  @ApiPageResponse(UsageDayDto)
  @ApiErrors(UsageErrors.INVALID_DATE_RANGE)
  usageByDay(@CurrentPrincipal() principal: Principal, @Query() query: UsageQueryDto) {
    return this.usage.usage(principal, query);
  }
}
