import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { ApexStatusService } from './apex-status/apex-status.service';
import { DomainErrors } from './domains.errors';
import { DomainsService } from './domains.service';
import { ApexStatusDto, ApexStatusQueryDto, CreateDomainRequest, DomainDto } from './dto/domain.dto';

@ApiTags('domains')
@Controller('domains')
export class DomainsController {
  constructor(
    private readonly domains: DomainsService,
    private readonly apexStatus: ApexStatusService,
  ) {}

  @Get()
  @RequirePermission(Permission.DomainsRead)
  @ApiOperation({ summary: "List the organization's managed domains", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(DomainDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.domains.list(principal, query);
  }

  // Before ':id', so that "apex-status" is not taken for an id.
  @Get('apex-status')
  @RequirePermission(Permission.DomainsRead)
  @ApiOperation({
    summary: 'Apex status',
    description:
      "Whether the wildcard under the apex is live and managed by the service (`exists`), whether the caller's organization may nest under it (`authorized`), who owns it and what depends on it. " +
      'Another organization\'s registration is visible only while ACTIVE; otherwise the apex reads as unregistered (`owner` is `""`). Dependents\' hostnames are listed only to the owner and to organizations holding a grant on the apex; `dependentCount` is exact for the registration described.',
  })
  @ApiDataResponse(ApexStatusDto)
  async status(@CurrentPrincipal() principal: Principal, @Query() query: ApexStatusQueryDto) {
    return { data: await this.apexStatus.status(principal, query.apex) };
  }

  @Post()
  @RequirePermission(Permission.DomainsWrite)
  @ApiOperation({
    summary: 'Register an apex',
    description:
      "Registers the apex as PENDING_VERIFICATION and returns the TXT record to publish (`verificationRecord`); then call POST /domains/{id}/verify. An unverified registration holds nothing and reveals nothing: several organizations may each hold a PENDING claim on an apex and the first to verify wins; a claim unverified for DOMAIN_PENDING_TTL_MS expires. An apex verified by another organization (ACTIVE, or LAPSED for less than DOMAIN_LAPSED_HOLD_MS since its record was first missed), or already registered by the caller's own organization, is a 409. Under an ACTIVE apex of another organization, only an organization it granted may register (403).",
  })
  @ApiDataResponse(DomainDto, { status: 201 })
  @ApiErrors(DomainErrors.APEX_TAKEN, DomainErrors.NESTING_NOT_GRANTED)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateDomainRequest) {
    return { data: await this.domains.register(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.DomainsRead)
  @ApiOperation({ summary: 'Get a managed domain' })
  @ApiDataResponse(DomainDto)
  @ApiErrors(DomainErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.domains.get(principal, id) };
  }

  @Post(':id/verify')
  @HttpCode(200)
  @RequirePermission(Permission.DomainsWrite)
  @ApiOperation({
    summary: 'Verify a managed domain',
    description:
      'Looks up the TXT record `verificationRecord.name` through the configured resolver. Found with the expected value: the domain becomes ACTIVE. Not found: 422 naming the record expected and the TXT values seen. The resolver not answering: 503 with Retry-After.',
  })
  @ApiDataResponse(DomainDto)
  @ApiErrors(
    DomainErrors.NOT_FOUND,
    DomainErrors.VERIFICATION_RECORD_NOT_FOUND,
    DomainErrors.NESTING_NOT_GRANTED,
    DomainErrors.APEX_TAKEN,
    DomainErrors.REGISTRATION_EXPIRED,
  )
  async verify(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.domains.verify(principal, id) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission(Permission.DomainsWrite)
  @ApiOperation({
    summary: 'Delete a managed domain',
    description: 'Also removes its grants. Refused with 409 while it has dependents; the error details list them.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(DomainErrors.NOT_FOUND, DomainErrors.HAS_DEPENDENTS)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.domains.remove(principal, id);
  }
}
