import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiPageResponse } from '@/common/http/envelope';
import { AuditService } from './audit.service';
import { AuditEventDto, AuditEventQueryDto } from './dto/audit-event.dto';

@ApiTags('audit-events')
@Controller('audit-events')
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @RequirePermission(Permission.AuditEventsRead)
  @ApiOperation({
    summary: "List the organization's audit trail",
    description:
      'Security-relevant actions (keys created, rotated, revoked; members and service accounts created, changed, removed), newest first, filterable by action and target.',
  })
  @ApiPageResponse(AuditEventDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: AuditEventQueryDto) {
    return this.audit.list(principal, query);
  }
}
