import { Module } from '@nestjs/common';
import { MaintenanceService } from './maintenance.service';

/** Housekeeping jobs; the processor is registered by the worker module only. */
@Module({ providers: [MaintenanceService], exports: [MaintenanceService] })
export class MaintenanceModule {}
