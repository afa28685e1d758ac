/**
 * Seeds the demo organization idempotently: an OWNER member, a few projects, execution
 * environments and service accounts, and a demo API key whose token is kept in .data/demo-token
 * (git-ignored) so that every `npm start` prints a working token without minting a new one.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../src/generated/prisma/client';
import { hashToken } from '../src/common/auth/api-key-hash';
import { apiKeyTokenSuffix, encodeApiKeyToken } from '../src/common/auth/api-key-token';

export const DEMO_ORGANIZATION = 'demo';
const DEFAULT_TOKEN_FILE = join(__dirname, '..', '.data', 'demo-token');

export async function seedDemo(databaseUrl: string, tokenFile = DEFAULT_TOKEN_FILE): Promise<{ organizationId: string; token: string }> {
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
  try {
    const organization = await prisma.organization.upsert({ where: { name: DEMO_ORGANIZATION }, create: { name: DEMO_ORGANIZATION }, update: {} });
    const organizationId = organization.id;
    const owner =
      (await prisma.member.findFirst({ where: { organizationId, role: 'OWNER' }, orderBy: { createdAt: 'asc' } })) ??
      (await prisma.member.create({ data: { organizationId, name: 'Demo owner', email: 'owner@demo.example', role: 'OWNER' } }));

    for (const [givenId, name, description] of [
      ['checkout', 'Checkout', 'Payment and order flow'],
      ['catalog', 'Catalog', 'Product catalog service'],
      ['storefront', 'Storefront', 'Customer-facing web app'],
    ]) {
      await prisma.project.upsert({
        where: { organizationId_givenId: { organizationId, givenId } },
        create: { organizationId, givenId, name, description },
        update: {},
      });
    }
    for (const [givenId, name, region] of [
      ['production', 'Production', 'eu-central-1'],
      ['staging', 'Staging', 'eu-west-1'],
    ]) {
      await prisma.executionEnvironment.upsert({
        where: { organizationId_givenId: { organizationId, givenId } },
        create: {
          organizationId,
          givenId,
          name,
          type: 'AWS',
          region,
          vpcId: 'vpc-0a1b2c3d',
          subnetId: 'subnet-0a1b2c3d',
          securityGroupId: 'sg-0a1b2c3d',
          cloudAccountId: '123456789012',
        },
        update: {},
      });
    }
    await prisma.serviceAccount.upsert({
      where: { organizationId_name: { organizationId, name: 'ci-deployer' } },
      create: { organizationId, name: 'ci-deployer', description: 'Deploys from CI', role: 'MEMBER', createdById: owner.id, createdByName: owner.name },
      update: {},
    });

    if (existsSync(tokenFile)) {
      const token = readFileSync(tokenFile, 'utf8').trim();
      const tokenHash = hashToken(token);
      const key = await prisma.apiKey.findUnique({ where: { tokenHash } });
      if (key && key.organizationId === organizationId && !key.revokedAt && (!key.expiresAt || key.expiresAt > new Date())) return { organizationId, token };
    }
    const token = encodeApiKeyToken(randomBytes(32));
    await prisma.apiKey.create({
      data: {
        organizationId,
        name: 'demo (npm start)',
        ownerId: owner.id,
        ownerType: 'MEMBERSHIP',
        createdById: owner.id,
        tokenHash: hashToken(token),
        keySuffix: apiKeyTokenSuffix(token),
      },
    });
    mkdirSync(dirname(tokenFile), { recursive: true });
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    return { organizationId, token };
  } finally {
    await prisma.$disconnect();
  }
}

if (require.main === module) {
  const url = process.env.DATABASE_URL;
  if (!url) {
    process.stderr.write('Invalid configuration: DATABASE_URL is not set\n');
    process.exit(78);
  }
  seedDemo(url).then(
    ({ organizationId }) => process.stdout.write(`seeded organization ${DEMO_ORGANIZATION} (${organizationId}); token in .data/demo-token\n`),
    (error: unknown) => {
      process.stderr.write(`✗ ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
