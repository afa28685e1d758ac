import { Module } from '@nestjs/common';
import { ApexStatusService } from './apex-status/apex-status.service';
import { DomainDependentsController } from './dependents/domain-dependents.controller';
import { DomainDependentsService } from './dependents/domain-dependents.service';
import { DomainGrantsController } from './grants/domain-grants.controller';
import { DomainGrantsService } from './grants/domain-grants.service';
import { DomainVerificationModule } from './verification/domain-verification.module';
import { DomainsController } from './domains.controller';
import { DomainsService } from './domains.service';

/** Managed wildcard domains (API side); periodic re-verification runs in the worker (DomainsProcessor). */
@Module({
  imports: [DomainVerificationModule],
  controllers: [DomainsController, DomainGrantsController, DomainDependentsController],
  providers: [DomainsService, DomainGrantsService, DomainDependentsService, ApexStatusService],
})
export class DomainsModule {}
