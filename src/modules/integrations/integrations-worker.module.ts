import { Module } from '@nestjs/common';
import { OAuthStatePurgeService } from './oauth-state-purge.service';

/** What the worker needs of integrations (the OAuth-state purge); the processor is registered by the worker module only. */
@Module({ providers: [OAuthStatePurgeService], exports: [OAuthStatePurgeService] })
export class IntegrationsWorkerModule {}
