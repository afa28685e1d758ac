import { Module } from '@nestjs/common';
import { UsageImportProducer } from './usage-import.producer';
import { UsageController } from './usage.controller';
import { UsageRepository } from './usage.repository';
import { UsageService } from './usage.service';
import { UsageMetrics } from './usage-metrics';

/** CI usage (API side): starting imports and reading usage; the imports run in the worker (UsageImportsProcessor). */
@Module({ controllers: [UsageController], providers: [UsageService, UsageRepository, UsageImportProducer, UsageMetrics] })
export class UsageModule {}
