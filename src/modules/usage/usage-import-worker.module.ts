import { Module } from '@nestjs/common';
import { IntegrationAccessModule } from '@/modules/integrations/integration-access.module';
import { UsageImportRunner } from './usage-import.runner';
import { UsageRepository } from './usage.repository';
import { UsageMetrics } from './usage-metrics';

/** What the worker needs to run usage imports; the processor is registered by the worker module. */
@Module({ imports: [IntegrationAccessModule], providers: [UsageRepository, UsageImportRunner, UsageMetrics], exports: [UsageImportRunner] })
export class UsageImportWorkerModule {}
