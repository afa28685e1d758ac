import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '@/common/auth/auth.decorators';
import { Permission } from '@/common/auth/permissions';
import type { Principal } from '@/common/auth/principal';
import { ApiErrors } from '@/common/errors/api-error-responses';
import { ApiDataResponse, ApiPageResponse } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { CreateMemberRequest, MemberDto, UpdateMemberRequest } from './dto/member.dto';
import { MemberErrors } from './members.errors';
import { MembersService } from './members.service';
import { AuthErrors } from '@/common/errors/common.errors';

@ApiTags('members')
@Controller('members')
export class MembersController {
  constructor(private readonly members: MembersService) {}

  @Get()
  @RequirePermission(Permission.MembersRead)
  @ApiOperation({ summary: "List the organization's members", description: 'Newest first; paginated with `cursor` and `limit`.' })
  @ApiPageResponse(MemberDto)
  list(@CurrentPrincipal() principal: Principal, @Query() query: PaginationQueryDto) {
    return this.members.list(principal, query);
  }

  @Post()
  @RequirePermission(Permission.MembersWrite)
  @ApiOperation({
    summary: 'Add a member',
    description: 'There is no password login: issue the member an API key with POST /api-keys. The role may not be above yours.',
  })
  @ApiDataResponse(MemberDto, { status: 201 })
  @ApiErrors(MemberErrors.EMAIL_TAKEN, AuthErrors.FORBIDDEN)
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateMemberRequest) {
    return { data: await this.members.create(principal, body.data) };
  }

  @Get(':id')
  @RequirePermission(Permission.MembersRead)
  @ApiOperation({ summary: 'Get a member' })
  @ApiDataResponse(MemberDto)
  @ApiErrors(MemberErrors.NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return { data: await this.members.get(principal, id) };
  }

  @Patch(':id')
  @RequirePermission(Permission.MembersWrite)
  @ApiOperation({
    summary: 'Rename a member or change their role',
    description:
      'Takes effect on the next request of their keys in every API process. You cannot manage a member above your role, grant a role above yours, or demote the last OWNER.',
  })
  @ApiDataResponse(MemberDto)
  @ApiErrors(MemberErrors.NOT_FOUND, MemberErrors.LAST_OWNER, AuthErrors.FORBIDDEN)
  async update(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: UpdateMemberRequest) {
    return { data: await this.members.update(principal, id, body.data) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission(Permission.MembersWrite)
  @ApiOperation({
    summary: 'Remove a member',
    description: 'Revokes every key issued to them, at once in every API process. The last OWNER cannot be removed.',
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrors(MemberErrors.NOT_FOUND, MemberErrors.LAST_OWNER, AuthErrors.FORBIDDEN)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.members.remove(principal, id);
  }
}
