import { Module } from '@nestjs/common';
import { AuditModule } from '@/modules/audit/audit.module';
import { GitProvidersModule } from '@/modules/git-providers/git-providers.module';
import { IntegrationCredentials } from './integration-credentials';
import { IntegrationsService } from './integrations.service';

/** Integrations without their routes: provider clients with an integration's credentials, status transitions. The worker imports this. */
@Module({
  imports: [AuditModule, GitProvidersModule],
  providers: [IntegrationsService, IntegrationCredentials],
  exports: [IntegrationsService, IntegrationCredentials, GitProvidersModule, AuditModule],
})
export class IntegrationAccessModule {}
