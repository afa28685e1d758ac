import { Module } from '@nestjs/common';
import { AuditModule } from '@/modules/audit/audit.module';
import { GitProvidersModule } from '@/modules/git-providers/git-providers.module';
import { IntegrationsModule } from '@/modules/integrations/integrations.module';
import { CodeSourceRepositoryController, CodeSourcesController } from './code-sources.controller';
import { CodeSourcesService } from './code-sources.service';

@Module({
  imports: [AuditModule, GitProvidersModule, IntegrationsModule],
  controllers: [CodeSourcesController, CodeSourceRepositoryController],
  providers: [CodeSourcesService],
})
export class CodeSourcesModule {}
