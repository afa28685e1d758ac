import { Module } from '@nestjs/common';
import { ModuleDefinitionsController, ModuleVersionsController } from './module-versions.controller';
import { ModuleVersionsRepository } from './module-versions.repository';
import { ModuleVersionsService } from './module-versions.service';

@Module({
  controllers: [ModuleDefinitionsController, ModuleVersionsController],
  providers: [ModuleVersionsService, ModuleVersionsRepository],
  exports: [ModuleVersionsService],
})
export class ModuleVersionsModule {}
