import { Global, Module } from '@nestjs/common';
import { MetricsService } from './metrics.service';

/** One registry per application, for every module of both processes. */
@Global()
@Module({ providers: [MetricsService], exports: [MetricsService] })
export class MetricsModule {}
