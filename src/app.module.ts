import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AuthModule } from '@/common/auth/auth.module';
import { ConfigModule } from '@/common/config/config.module';
import { AllExceptionsFilter } from '@/common/errors/all-exceptions.filter';
import { LoggingModule } from '@/common/logging/logging.module';
import { MetricsModule } from '@/common/metrics/metrics.module';
import { PrismaModule } from '@/common/prisma/prisma.module';
import { QueuesModule } from '@/common/queues/queues.module';
import { RedisModule } from '@/common/redis/redis.module';
import { ApiKeysModule } from '@/modules/api-keys/api-keys.module';
import { ExecutionEnvironmentsModule } from '@/modules/execution-environments/execution-environments.module';
import { HealthModule } from '@/modules/health/health.module';
import { OrganizationsModule } from '@/modules/organizations/organizations.module';
import { PipelinesModule } from '@/modules/pipelines/pipelines.module';
import { ProjectsModule } from '@/modules/projects/projects.module';
import { ServiceAccountsModule } from '@/modules/service-accounts/service-accounts.module';
import { ThrottlingModule } from '@/common/throttling/throttling.module';
import { AuditModule } from '@/modules/audit/audit.module';
import { MembersModule } from '@/modules/members/members.module';
import { ReportsModule } from '@/modules/reports/reports.module';
import { ModuleVersionsModule } from '@/modules/module-versions/module-versions.module';
import { DomainsModule } from '@/modules/domains/domains.module';
import { CodeSourcesModule } from '@/modules/code-sources/code-sources.module';
import { GitServersModule } from '@/modules/git-servers/git-servers.module';
import { IntegrationsModule } from '@/modules/integrations/integrations.module';
import { MergeQueuesModule } from '@/modules/merge-queues/merge-queues.module';
import { UsageModule } from '@/modules/usage/usage.module';
import { WebhooksModule } from '@/modules/webhooks/webhooks.module';

/** Infrastructure every process shares (the worker module imports it too). */
export const INFRASTRUCTURE_MODULES = [ConfigModule, LoggingModule, MetricsModule, PrismaModule, RedisModule, QueuesModule];

/**
 * The API process: infrastructure, auth, rate limits, and one module per domain. ThrottlingModule
 * comes right after AuthModule: global guards run in that order, and per-key budgets need the
 * principal the bearer guard sets.
 */
@Module({
  imports: [
    ...INFRASTRUCTURE_MODULES,
    AuthModule,
    ThrottlingModule,
    HealthModule,
    OrganizationsModule,
    ApiKeysModule,
    ProjectsModule,
    ExecutionEnvironmentsModule,
    ServiceAccountsModule,
    MembersModule,
    AuditModule,
    ReportsModule,
    PipelinesModule,
    ModuleVersionsModule,
    DomainsModule,
    IntegrationsModule,
    GitServersModule,
    CodeSourcesModule,
    MergeQueuesModule,
    UsageModule,
    WebhooksModule,
  ],
  providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
})
export class AppModule {}
