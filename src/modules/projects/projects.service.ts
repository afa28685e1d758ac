import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { createWithGivenId } from '@/common/http/given-id';
import { isUniqueViolation } from '@/common/prisma/unique-violation';
import { newestFirst, newestFirstFromSql, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import { CreateProjectDto, ProjectDto, toProjectDto, UpdateProjectDto } from './dto/project.dto';
import { ProjectErrors } from './projects.errors';
import type { Project } from '@/generated/prisma/client';

/** The list's keyset: newest first; its cursors carry the tag 'projects'. */
const LIST = newestFirst<Project>('projects');
const PROJECT_COLUMNS = '"id", "organizationId", "givenId", "name", "description", "status"::text AS "status", "error", "createdAt", "updatedAt"';

@Injectable()
export class ProjectsService {
  constructor(private readonly prisma: PrismaService) {}

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<ProjectDto>> {
    return paginate(newestFirstFromSql<Project>(this.prisma.sql, 'Project', PROJECT_COLUMNS, principal.organizationId), LIST, query, toProjectDto);
  }

  async get(principal: Principal, id: string): Promise<ProjectDto> {
    const row = await this.prisma.project.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(ProjectErrors.NOT_FOUND, { metadata: { id } });
    return toProjectDto(row);
  }

  async create(principal: Principal, dto: CreateProjectDto): Promise<ProjectDto> {
    const row = await createWithGivenId(dto.name, dto.givenId, ProjectErrors.GIVEN_ID_TAKEN, (givenId) =>
      this.prisma.project.create({ data: { organizationId: principal.organizationId, givenId, name: dto.name, description: dto.description } }),
    );
    return toProjectDto(row);
  }

  async update(principal: Principal, id: string, dto: UpdateProjectDto): Promise<ProjectDto> {
    try {
      const { count } = await this.prisma.project.updateMany({ where: { id, organizationId: principal.organizationId }, data: dto });
      if (count === 0) throw new AppError(ProjectErrors.NOT_FOUND, { metadata: { id } });
    } catch (error) {
      if (isUniqueViolation(error, 'givenId')) throw new AppError(ProjectErrors.GIVEN_ID_TAKEN, { metadata: { givenId: dto.givenId } });
      throw error;
    }
    return this.get(principal, id);
  }

  async remove(principal: Principal, id: string): Promise<void> {
    const { count } = await this.prisma.project.deleteMany({ where: { id, organizationId: principal.organizationId } });
    if (count === 0) throw new AppError(ProjectErrors.NOT_FOUND, { metadata: { id } });
  }
}
