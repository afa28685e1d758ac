import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { GitProviderErrors } from '@/modules/git-providers/git-providers.errors';
import { CreateGitServerRequest, GitServerDto } from './dto/git-server.dto';
import { GitServerErrors } from './git-servers.errors';
import { GitServersService } from './git-servers.service';

@ApiTags('git servers')
@Controller('git/self-hosted')
export class GitServersController {
  constructor(private readonly servers: GitServersService) {}

  @Get()
  @RequirePermission(Permission.GitServersRead)
  @ApiOperation({ summary: "List the organization's self-hosted git servers", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(GitServerDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.servers.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.GitServersWrite)
  @ApiOperation({
    summary: 'Register a self-hosted git server',
    description: 'The URL is checked (see `hostUrl`) and the server asked for its version through the same guard; each refusal is a 422 saying why.',
  })
  @ApiDataResponse(GitServerDto, { status: 201 })
  @ApiErrors(
    GitServerErrors.HOST_TAKEN,
    GitProviderErrors.HOST_REFUSED,
    GitProviderErrors.HOST_UNRESOLVED,
    GitProviderErrors.REQUEST_REJECTED,
    GitProviderErrors.UNAVAILABLE,
    GitProviderErrors.TIMEOUT,
    GitProviderErrors.RATE_LIMITED,
    GitProviderErrors.CREDENTIALS_REJECTED,
    GitProviderErrors.REPOSITORY_NOT_FOUND,
  )
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateGitServerRequest) {
    return { data: await this.servers.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.GitServersRead)
  @ApiOperation({ summary: 'Get a self-hosted git server' })
  @ApiDataResponse(GitServerDto)
  @ApiErrors(GitServerErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.servers.get(principal, id) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission(Permission.GitServersWrite)
  @ApiOperation({ summary: 'Remove a self-hosted git server', description: 'Refused (409) while integrations are connected through it.' })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors(GitServerErrors.NOT_FOUND, GitServerErrors.IN_USE)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.servers.remove(principal, id);
  }
}
