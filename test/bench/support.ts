import { randomBytes } from 'node:crypto';
import { hashToken } from '@/common/auth/api-key-hash';
import { apiKeyTokenSuffix, encodeApiKeyToken } from '@/common/auth/api-key-token';
import type { PrismaClient } from '@/generated/prisma/client';

/** Creates an OWNER member in the organization and an API key it owns; returns the member's id and the key's token. */
export async function createBenchOwnerKey(prisma: PrismaClient, organizationId: string): Promise<{ ownerId: string; token: string }> {
  const owner = await prisma.member.create({ data: { organizationId, name: 'bench owner', role: 'OWNER' } });
  const token = encodeApiKeyToken(randomBytes(32));
  await prisma.apiKey.create({
    data: {
      organizationId,
      name: 'bench',
      ownerId: owner.id,
      ownerType: 'MEMBERSHIP',
      createdById: owner.id,
      tokenHash: hashToken(token),
      keySuffix: apiKeyTokenSuffix(token),
    },
  });
  return { ownerId: owner.id, token };
}
