import { Module } from '@nestjs/common';
import { ExecutionEnvironmentsController } from './execution-environments.controller';
import { ExecutionEnvironmentsService } from './execution-environments.service';

@Module({ controllers: [ExecutionEnvironmentsController], providers: [ExecutionEnvironmentsService], exports: [ExecutionEnvironmentsService] })
export class ExecutionEnvironmentsModule {}
