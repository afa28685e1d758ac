import { Module } from '@nestjs/common';
import { PipelineRunsController } from './pipeline-runs.controller';
import { PipelineRunsService } from './pipeline-runs.service';
import { PipelineVersionsController } from './pipeline-versions.controller';
import { PipelineVersionsService } from './pipeline-versions.service';
import { PipelinesController } from './pipelines.controller';
import { PipelinesService } from './pipelines.service';
import { SandboxPlanService } from './sandbox-plan.service';

@Module({
  controllers: [PipelinesController, PipelineVersionsController, PipelineRunsController],
  providers: [PipelinesService, PipelineVersionsService, PipelineRunsService, SandboxPlanService],
})
export class PipelinesModule {}
