import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { GitProviderErrors, PROVIDER_CALL_ERRORS } from '@/modules/git-providers/git-providers.errors';
import { IntegrationErrors } from '@/modules/integrations/integrations.errors';
import { CodeSourceErrors } from './code-sources.errors';
import { CodeSourcesService } from './code-sources.service';
import { CodeSourceDto, CreateCodeSourceRequest, RepositoryDto } from './dto/code-source.dto';

const READ_ERRORS = [
  GitProviderErrors.REPOSITORY_NOT_FOUND,
  GitProviderErrors.INTEGRATION_NEEDS_ATTENTION,
  GitProviderErrors.LOCAL_GIT_DISABLED,
  GitProviderErrors.NOT_CONFIGURED,
  GitProviderErrors.CREDENTIALS_REJECTED,
  IntegrationErrors.NOT_FOUND,
  ...PROVIDER_CALL_ERRORS,
];

@ApiTags('code sources')
@Controller('code-sources')
export class CodeSourcesController {
  constructor(private readonly sources: CodeSourcesService) {}

  @Get()
  @RequirePermission(Permission.CodeSourcesRead)
  @ApiOperation({ summary: "List the organization's code sources", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(CodeSourceDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.sources.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.CodeSourcesWrite)
  @ApiOperation({
    summary: 'Connect a repository',
    description:
      '`{integrationId, repository: "owner/name"}` (checked with the provider), or `{provider: "LOCAL_GIT", repository: "/abs/path.git"}` for a bare repository on this server under GIT_LOCAL_ROOT (when GIT_LOCAL_ENABLED; symlinks are resolved and the resolved path is stored; a path another organization has connected is a 409).',
  })
  @ApiDataResponse(CodeSourceDto, { status: 201 })
  @ApiErrors(
    CodeSourceErrors.ALREADY_CONNECTED,
    CodeSourceErrors.LOCAL_PATH_TAKEN,
    CodeSourceErrors.INTEGRATION_REQUIRED,
    CodeSourceErrors.INTEGRATION_NOT_FOUND,
    CodeSourceErrors.INTEGRATION_NOT_ACTIVE,
    CodeSourceErrors.INVALID_REPOSITORY,
    ...READ_ERRORS,
  )
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateCodeSourceRequest) {
    return { data: await this.sources.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.CodeSourcesRead)
  @ApiOperation({ summary: 'Get a code source' })
  @ApiDataResponse(CodeSourceDto)
  @ApiErrors(CodeSourceErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.sources.get(principal, id) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission(Permission.CodeSourcesWrite)
  @ApiOperation({
    summary: 'Disconnect a code source',
    description:
      'Its merge queues are deleted with it, so a code source with merge queues needs `mergeQueues:operate` (ADMIN; a scoped key must hold it among its scopes too); anyone else gets a 409 naming the queues.',
  })
  @ApiNoContentResponse({ description: 'Disconnected' })
  @ApiErrors(CodeSourceErrors.NOT_FOUND, CodeSourceErrors.HAS_MERGE_QUEUES)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.sources.remove(principal, id);
  }
}

@ApiTags('code sources')
@Controller('code-source')
export class CodeSourceRepositoryController {
  constructor(private readonly sources: CodeSourcesService) {}

  @Get(':id/repository')
  @RequirePermission(Permission.CodeSourcesRead)
  @ApiOperation({
    summary: 'Get a repository from the git provider',
    description:
      "The provider's repository information, mapped field by field, cached for GIT_REPOSITORY_CACHE_TTL_MS. A repository the provider does not have is a 404; credentials the provider refuses are a 424 (the integration becomes NEEDS_ATTENTION); a provider rate limit is a 503 with Retry-After; a provider down or too slow is a 502.",
  })
  @ApiDataResponse(RepositoryDto)
  @ApiErrors(CodeSourceErrors.NOT_FOUND, CodeSourceErrors.INTEGRATION_NOT_FOUND, ...READ_ERRORS)
  async repository(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.sources.repository(principal, id) };
  }
}
