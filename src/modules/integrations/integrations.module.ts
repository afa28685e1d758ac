import { Module } from '@nestjs/common';
import { AuditModule } from '@/modules/audit/audit.module';
import { GitProvidersModule } from '@/modules/git-providers/git-providers.module';
import { IntegrationCredentials } from './integration-credentials';
import { IntegrationsController, OAuthCallbackController } from './integrations.controller';
import { IntegrationsService } from './integrations.service';
import { OAuthCallbackService } from './oauth-callback.service';

@Module({
  imports: [AuditModule, GitProvidersModule],
  controllers: [IntegrationsController, OAuthCallbackController],
  providers: [IntegrationsService, OAuthCallbackService, IntegrationCredentials],
  exports: [IntegrationsService],
})
export class IntegrationsModule {}
