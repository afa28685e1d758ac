import { Injectable } from '@nestjs/common';
import { verificationRecordName } from './apex-name';
import { DnsResolver } from './dns-resolver';

export interface VerificationCheck {
  /** The record name looked up. */
  name: string;
  /** The expected value is among the TXT records at the name. */
  found: boolean;
  /** Every TXT value seen there. */
  seen: string[];
}

/** Looks up a domain's verification record. Throws DnsUnavailableError when the resolver cannot say. */
@Injectable()
export class DomainVerifier {
  constructor(private readonly resolver: DnsResolver) {}

  async check(domain: { apex: string; verificationToken: string }): Promise<VerificationCheck> {
    const name = verificationRecordName(domain.apex);
    const { records } = await this.resolver.resolveTxt(name);
    return { name, found: records.includes(domain.verificationToken), seen: records };
  }
}
