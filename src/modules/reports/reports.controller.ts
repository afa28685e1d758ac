import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { RateLimit } from '@/common/throttling/rate-limit.decorators';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission, RequireSuperadmin } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateReportRequest, ReportDto } from './dto/report.dto';
import { ReportsService } from './reports.service';

@ApiTags('reports')
@Controller('reports')
export class ReportsController {
  constructor(private readonly reports: ReportsService) {}

  @Post()
  @HttpCode(204)
  @RequirePermission(Permission.ReportsCreate)
  @RateLimit('reports')
  @ApiOperation({
    summary: 'Report a bug or give feedback',
    description:
      'Stored with your organization, who sent it and the request id; superadmins read them. `title` (1-200) and `message` (1-20,000) are required; `metadata` and its members are optional strings.',
  })
  @ApiNoContentResponse({ description: 'Received; no body' })
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateReportRequest): Promise<void> {
    await this.reports.create(principal, body.data);
  }

  @Get()
  @RequireSuperadmin()
  @ApiOperation({ summary: 'List reports of every organization (superadmins)', description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(ReportDto)
  list(@Query() query: PaginationQueryDto) {
    return this.reports.listAll(query);
  }
}
