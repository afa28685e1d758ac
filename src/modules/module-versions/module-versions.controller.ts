import { Body, Controller, Get, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { jsonText } from '@/common/http/json-text';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateModuleDefinitionRequest, ModuleDefinitionDto } from './dto/module-definition.dto';
import { CreateModuleVersionRequest, ModuleVersionDto, ModuleVersionQueryDto, ModuleVersionSummaryDto } from './dto/module-version.dto';
import { ModuleDefinitionErrors, ModuleVersionErrors } from './module-versions.errors';
import { ModuleVersionsService } from './module-versions.service';

const LIST_ORDER =
  "Your organization's versions plus the global ones. Ordered by semver precedence, newest first (build metadata ignored; a prerelease below its release), then by id; paginated with `cursor` and `limit`, stable across pages. Prereleases are included unless `includePrereleases=false`. `meta.totalCount` counts under the same filters.";

@ApiTags('module-versions')
@Controller('module-definitions')
export class ModuleDefinitionsController {
  constructor(private readonly modules: ModuleVersionsService) {}

  @Get()
  @RequirePermission(Permission.ModuleVersionsRead)
  @ApiOperation({ summary: "List your organization's and the global module definitions", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(ModuleDefinitionDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.modules.listDefinitions(principal, query);
  }

  @Post()
  @RequirePermission(Permission.ModuleVersionsWrite)
  @ApiOperation({
    summary: 'Create a module definition',
    description: 'Names are unique per owner (your organization, or global). `global: true` is for superadmins only (403 otherwise).',
  })
  @ApiDataResponse(ModuleDefinitionDto, { status: 201 })
  @ApiErrors(ModuleDefinitionErrors.NAME_TAKEN, ModuleDefinitionErrors.GLOBAL_REQUIRES_SUPERADMIN)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateModuleDefinitionRequest) {
    return { data: await this.modules.createDefinition(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.ModuleVersionsRead)
  @ApiOperation({ summary: 'Get a module definition (yours or global)' })
  @ApiDataResponse(ModuleDefinitionDto)
  @ApiErrors(ModuleDefinitionErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.modules.getDefinition(principal, id) };
  }
}

@ApiTags('module-versions')
@Controller('module-versions')
export class ModuleVersionsController {
  constructor(private readonly modules: ModuleVersionsService) {}

  @Get('summaries')
  @RequirePermission(Permission.ModuleVersionsRead)
  @ApiOperation({
    summary: 'List module version summaries',
    description: `Module version metadata without \`config\` (not read from the database). ${LIST_ORDER}`,
  })
  @ApiPageResponse(ModuleVersionSummaryDto)
  async summaries(@CurrentPrincipal() principal: Principal, @Query() query: ModuleVersionQueryDto, @Res({ passthrough: true }) res: Response) {
    return jsonText(res, await this.modules.listSummaries(principal, query));
  }

  @Get()
  @RequirePermission(Permission.ModuleVersionsRead)
  @ApiOperation({ summary: 'List module versions', description: `Module versions with \`config\`. ${LIST_ORDER}` })
  @ApiPageResponse(ModuleVersionDto)
  async list(@CurrentPrincipal() principal: Principal, @Query() query: ModuleVersionQueryDto, @Res({ passthrough: true }) res: Response) {
    return jsonText(res, await this.modules.listVersions(principal, query));
  }

  @Post()
  @RequirePermission(Permission.ModuleVersionsWrite)
  @ApiOperation({
    summary: 'Publish a module version',
    description:
      'Versions are immutable. A version of equal semver precedence to an existing one of the same definition (build metadata ignored: `1.0.0+a` equals `1.0.0+b`) is a 409. A definition of another organization is a 404; a global one needs a superadmin (403).',
  })
  @ApiDataResponse(ModuleVersionDto, { status: 201 })
  @ApiErrors(ModuleDefinitionErrors.NOT_FOUND, ModuleDefinitionErrors.GLOBAL_REQUIRES_SUPERADMIN, ModuleVersionErrors.VERSION_EXISTS)
  async publish(@CurrentPrincipal() principal: Principal, @Body() body: CreateModuleVersionRequest) {
    return { data: await this.modules.publish(principal, body.data) };
  }
}
