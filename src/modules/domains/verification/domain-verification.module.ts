import { Module } from '@nestjs/common';
import { APP_CONFIG } from '@/common/config/config.module';
import type { AppConfig } from '@/common/config/app-config';
import { AuditModule } from '@/modules/audit/audit.module';
import { DnsResolver, NodeDnsResolver } from '../dns/dns-resolver';
import { DomainExpiryService } from './domain-expiry.service';
import { DomainReverificationService } from './domain-reverification.service';
import { DomainVerifier } from '../dns/domain-verifier';
import { DomainsRepository } from '../domains.repository';

/** What both processes need: the resolver port, the verifier, the repository, re-verification and expiry. */
@Module({
  imports: [AuditModule],
  providers: [
    {
      provide: DnsResolver,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new NodeDnsResolver(config.domains.dnsServers, config.domains.dnsTimeoutMs),
    },
    DomainVerifier,
    DomainsRepository,
    DomainReverificationService,
    DomainExpiryService,
  ],
  exports: [DnsResolver, DomainVerifier, DomainsRepository, DomainReverificationService, DomainExpiryService, AuditModule],
})
export class DomainVerificationModule {}
