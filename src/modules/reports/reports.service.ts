import { Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import { currentRequestId } from '@/common/http/request-context';
import { fromModel, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Prisma, Report } from '@/generated/prisma/client';
import { CreateReportDto, ReportDto, toReportDto } from './dto/report.dto';

const LIST = newestFirst<Report>('reports');

@Injectable()
export class ReportsService {
  constructor(private readonly prisma: PrismaService) {}

  async create(principal: Principal, dto: CreateReportDto): Promise<void> {
    const metadata = Object.fromEntries(Object.entries(dto.metadata ?? {}).filter(([, v]) => v !== undefined)) as Prisma.InputJsonObject;
    await this.prisma.report.create({
      data: {
        organizationId: principal.organizationId,
        reporterId: principal.actorId,
        reporterType: principal.actorType,
        title: dto.title,
        message: dto.message,
        metadata,
        requestId: currentRequestId(),
      },
    });
  }

  /** Every organization's reports, for superadmins only (the controller says so). */
  listAll(query: PaginationQueryDto): Promise<Page<ReportDto>> {
    return paginate(fromModel(this.prisma.report, {}), LIST, query, toReportDto);
  }
}
