import { Module } from '@nestjs/common';
import { IntegrationAccessModule } from './integration-access.module';
import { IntegrationsController, OAuthCallbackController } from './integrations.controller';
import { OAuthCallbackService } from './oauth-callback.service';

@Module({
  imports: [IntegrationAccessModule],
  controllers: [IntegrationsController, OAuthCallbackController],
  providers: [OAuthCallbackService],
  exports: [IntegrationAccessModule],
})
export class IntegrationsModule {}
