import { Module } from '@nestjs/common';
import { ApexStatusService } from './apex-status.service';
import { DomainDependentsController } from './domain-dependents.controller';
import { DomainDependentsService } from './domain-dependents.service';
import { DomainGrantsController } from './domain-grants.controller';
import { DomainGrantsService } from './domain-grants.service';
import { DomainVerificationModule } from './domain-verification.module';
import { DomainsController } from './domains.controller';
import { DomainsService } from './domains.service';

/** Managed wildcard domains (API side); periodic re-verification runs in the worker (DomainsProcessor). */
@Module({
  imports: [DomainVerificationModule],
  controllers: [DomainsController, DomainGrantsController, DomainDependentsController],
  providers: [DomainsService, DomainGrantsService, DomainDependentsService, ApexStatusService],
})
export class DomainsModule {}
