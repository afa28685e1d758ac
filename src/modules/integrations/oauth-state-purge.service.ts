import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';

@Injectable()
export class OAuthStatePurgeService {
  constructor(private readonly prisma: PrismaService) {}

  /** Deletes OAuth CSRF states that expired more than a day ago (used ones are kept that long for audit). */
  async purgeExpiredOAuthStates(now: Date): Promise<number> {
    const { count } = await this.prisma.oAuthState.deleteMany({ where: { expiresAt: { lt: new Date(now.getTime() - 24 * 3600_000) } } });
    return count;
  }
}
