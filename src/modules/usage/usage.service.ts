import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '@/common/auth/principal';
import type { AppConfig } from '@/common/config/app-config';
import { APP_CONFIG } from '@/common/config/config.module';
import { AppError } from '@/common/errors/app-error';
import { invalidFields } from '@/common/errors/invalid-fields';
import { fromModel, newestFirst, type Keyset, type Page, paginate, parseRowId, type PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { UsageImport } from '@/generated/prisma/client';
import { toUsageDayDto, toUsageImportDto, type UsageDayDto, type UsageImportDto, type UsageQueryDto } from './dto/usage.dto';
import { UsageImportProducer } from './usage-import.producer';
import { retryAfterSeconds } from './usage-rules';
import { UsageErrors } from './usage.errors';
import { UsageRepository, type UsageGroupRow } from './usage.repository';

export interface UsageImportResult {
  data: { started: number };
  retryAfterSeconds: number;
  stale: boolean;
}

const IMPORTS = newestFirst<UsageImport>('usageImports');
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const WORKFLOW_NAME_MAX = 1_000;

/** Newest UTC day first, then code source and workflow: the order of GET /scm/actions/usage. */
const USAGE_DAYS: Keyset<UsageGroupRow, [string, string, string]> = {
  list: 'usageDays',
  orderBy: [],
  position: (row) => [row.day, row.codeSourceId, row.workflowName],
  parse: (values) => {
    if (values.length !== 3) return undefined;
    const [day, codeSourceId, workflowName] = values;
    if (
      typeof day !== 'string' ||
      !DAY.test(day) ||
      Number.isNaN(Date.parse(day)) ||
      day.startsWith('0000') ||
      new Date(day).toISOString().slice(0, 10) !== day
    )
      return undefined;
    if (!parseRowId(codeSourceId) || typeof workflowName !== 'string' || workflowName.length > WORKFLOW_NAME_MAX || workflowName.includes('\u0000'))
      return undefined;
    return [day, codeSourceId as string, workflowName];
  },
  after: () => ({}),
};

/** CI usage: starting imports (the worker runs them) and reading what they imported. */
@Injectable()
export class UsageService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly prisma: PrismaService,
    private readonly repository: UsageRepository,
    private readonly producer: UsageImportProducer,
  ) {}

  /**
   * Enqueues one import per connected code source that has none waiting, running or delayed, and
   * returns at once. Which sources are skipped is decided by BullMQ's deduplication in Redis, so
   * concurrent calls in any number of API processes start each import once.
   */
  async startImports(principal: Principal): Promise<UsageImportResult> {
    const organizationId = principal.organizationId;
    const sources = await this.repository.connectedSources(organizationId);
    const added = await Promise.all(
      sources.map(async (source) => {
        const importId = randomUUID();
        const fresh = await this.producer.enqueue({ importId, organizationId, codeSourceId: source.id });
        return fresh ? { id: importId, codeSourceId: source.id } : undefined;
      }),
    );
    const started = added.filter((a) => a !== undefined);
    await this.repository.createQueued(organizationId, started);
    const summary = await this.repository.summary(organizationId, new Date(Date.now() - this.config.usage.freshnessMs));
    return {
      data: { started: started.length },
      retryAfterSeconds: retryAfterSeconds(Date.now(), this.config.usage.cooldownSeconds, summary.rateLimitedUntil),
      stale: summary.stale,
    };
  }

  listImports(principal: Principal, query: PaginationQueryDto): Promise<Page<UsageImportDto>> {
    return paginate(fromModel(this.prisma.usageImport, this.repository.importsWhere(principal.organizationId)), IMPORTS, query, toUsageImportDto);
  }

  usage(principal: Principal, query: UsageQueryDto): Promise<Page<UsageDayDto>> {
    if (query.from && query.to && query.from > query.to)
      throw new AppError(UsageErrors.INVALID_DATE_RANGE, {
        details: [invalidFields(['from: must not be after to'], 'Invalid query parameters')],
        metadata: { from: query.from, to: query.to },
      });
    const source = this.repository.usageSource(principal.organizationId, { codeSourceId: query.codeSourceId, from: query.from, to: query.to });
    return paginate(source, USAGE_DAYS, query, toUsageDayDto);
  }
}
