import { randomBytes, randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { Prisma } from '@/generated/prisma/client';
import { parseVersion } from '@/modules/module-versions/semver-key';
import type { TestTenant } from './tenants';

/**
 * Rows written straight through Prisma, for tests whose subject is something else: a suite about
 * pipelines needs a project, not the project route. Each takes the tenant whose organization owns
 * the row and optional fields that override the defaults. A suite that proves an HTTP path builds
 * its data over HTTP instead.
 */
type Owner = Pick<TestTenant, 'organizationId'>;
const unique = () => randomUUID().slice(0, 8);
const prismaOf = (app: INestApplication) => app.get(PrismaService, { strict: false });

/** Execution environments shaped as the vendors require (identifiers that pass the API's checks). */
export const ENVIRONMENT_SHAPES = {
  AWS: {
    type: 'AWS',
    region: 'us-east-1',
    vpcId: 'vpc-0a1b2c3d',
    subnetId: 'subnet-0a1b2c3d4e5f60718',
    securityGroupId: 'sg-0a1b2c3d',
    cloudAccountId: '123456789012',
  },
  GCP: { type: 'GCP', region: 'europe-west1', vpcId: 'build-net', subnetId: 'build-subnet', securityGroupId: 'allow-sandboxes', cloudAccountId: 'acme-builds' },
} as const;

export function createProject(app: INestApplication, owner: Owner, data: Partial<Prisma.ProjectUncheckedCreateInput> = {}) {
  const givenId = data.givenId ?? `project-${unique()}`;
  return prismaOf(app).project.create({ data: { organizationId: owner.organizationId, givenId, name: givenId, ...data } });
}

export async function createPipeline(app: INestApplication, owner: Owner, data: Partial<Prisma.PipelineUncheckedCreateInput> = {}) {
  const projectId = data.projectId ?? (await createProject(app, owner)).id;
  const givenId = data.givenId ?? `pipeline-${unique()}`;
  return prismaOf(app).pipeline.create({ data: { organizationId: owner.organizationId, projectId, givenId, name: givenId, ...data } });
}

/** A version of a pipeline (a new pipeline when none is given) with its definition as stored. */
export async function createPipelineVersion(app: INestApplication, owner: Owner, data: Partial<Prisma.PipelineVersionUncheckedCreateInput> = {}) {
  const pipelineId = data.pipelineId ?? (await createPipeline(app, owner)).id;
  return prismaOf(app).pipelineVersion.create({ data: { organizationId: owner.organizationId, pipelineId, version: 1, definition: { steps: [] }, ...data } });
}

export async function createPipelineRun(app: INestApplication, owner: Owner, data: Partial<Prisma.PipelineRunUncheckedCreateInput> = {}) {
  const version = data.pipelineVersionId
    ? await prismaOf(app).pipelineVersion.findUniqueOrThrow({ where: { id: data.pipelineVersionId } })
    : await createPipelineVersion(app, owner);
  return prismaOf(app).pipelineRun.create({
    data: { organizationId: owner.organizationId, pipelineId: version.pipelineId, pipelineVersionId: version.id, ...data },
  });
}

export function createExecutionEnvironment(app: INestApplication, owner: Owner, data: Partial<Prisma.ExecutionEnvironmentUncheckedCreateInput> = {}) {
  const givenId = data.givenId ?? `env-${unique()}`;
  return prismaOf(app).executionEnvironment.create({
    data: { organizationId: owner.organizationId, givenId, name: givenId, ...ENVIRONMENT_SHAPES.AWS, ...data },
  });
}

export function createServiceAccount(
  app: INestApplication,
  owner: Pick<TestTenant, 'organizationId' | 'memberId'>,
  data: Partial<Prisma.ServiceAccountUncheckedCreateInput> = {},
) {
  return prismaOf(app).serviceAccount.create({
    data: { organizationId: owner.organizationId, name: `robot-${unique()}`, createdById: owner.memberId, createdByName: 'test factory', ...data },
  });
}

export function createGitServer(app: INestApplication, owner: Owner, data: Partial<Prisma.GitServerUncheckedCreateInput> = {}) {
  return prismaOf(app).gitServer.create({
    data: { organizationId: owner.organizationId, provider: 'GITHUB_ENTERPRISE', hostUrl: `https://git-${unique()}.example.com`, ...data },
  });
}

/** An integration row without stored credentials (ACTIVE unless told): enough for what only lists or references it. */
export function createIntegration(app: INestApplication, owner: Owner, data: Partial<Prisma.IntegrationUncheckedCreateInput> = {}) {
  const givenId = data.givenId ?? `integration-${unique()}`;
  return prismaOf(app).integration.create({
    data: {
      organizationId: owner.organizationId,
      givenId,
      name: givenId,
      provider: 'GITHUB',
      authMethod: 'API_TOKEN',
      status: 'ACTIVE',
      externalAccountId: unique(),
      ...data,
    },
  });
}

/** A code source; LOCAL_GIT on `url` (a bare repository path) unless told otherwise. */
export function createCodeSource(app: INestApplication, owner: Owner, data: Partial<Prisma.CodeSourceUncheckedCreateInput> = {}) {
  const name = `acme/repo-${unique()}`;
  return prismaOf(app).codeSource.create({
    data: { organizationId: owner.organizationId, provider: 'LOCAL_GIT', foreignId: name, nameWithOwner: name, url: `/tmp/${name}`, ...data },
  });
}

/** A module definition of the organization (shared, organizationId null, when told `{ organizationId: null }`). */
export function createModuleDefinition(app: INestApplication, owner: Owner, data: Partial<Prisma.ModuleDefinitionUncheckedCreateInput> = {}) {
  return prismaOf(app).moduleDefinition.create({ data: { organizationId: owner.organizationId, name: `module-${unique()}`, ...data } });
}

/**
 * A module version with its sort columns computed as the service computes them, in its definition's
 * organization (the database refuses any other).
 */
export async function createModuleVersion(app: INestApplication, owner: Owner, version: string, data: Partial<Prisma.ModuleVersionUncheckedCreateInput> = {}) {
  const parsed = parseVersion(version);
  if (!parsed.ok) throw new Error(`not a version: ${version} (${parsed.reason})`);
  const definition = data.moduleDefinitionId
    ? await prismaOf(app).moduleDefinition.findUniqueOrThrow({ where: { id: data.moduleDefinitionId } })
    : await createModuleDefinition(app, owner);
  return prismaOf(app).moduleVersion.create({
    data: {
      organizationId: definition.organizationId,
      moduleDefinitionId: definition.id,
      version,
      description: `version ${version}`,
      config: {},
      ...parsed.version.columns,
      ...data,
    },
  });
}

/** A managed domain, PENDING_VERIFICATION unless told (`{ status: 'ACTIVE', verifiedAt: new Date() }`). */
export function createManagedDomain(app: INestApplication, owner: Owner, data: Partial<Prisma.ManagedDomainUncheckedCreateInput> = {}) {
  return prismaOf(app).managedDomain.create({
    data: {
      organizationId: owner.organizationId,
      apex: `d${unique()}.example.com`,
      verificationToken: `dpa-verification=${randomBytes(24).toString('base64url')}`,
      ...data,
    },
  });
}

export function createDomainGrant(app: INestApplication, domainId: string, grantee: Owner) {
  return prismaOf(app).domainGrant.create({ data: { domainId, organizationId: grantee.organizationId } });
}

export function createDomainDependent(
  app: INestApplication,
  owner: Owner,
  domainId: string,
  hostname: string,
  data: Partial<Prisma.DomainDependentUncheckedCreateInput> = {},
) {
  return prismaOf(app).domainDependent.create({
    data: { organizationId: owner.organizationId, domainId, hostname, kind: 'OTHER', resourceId: unique(), ...data },
  });
}

export function createReport(
  app: INestApplication,
  owner: Pick<TestTenant, 'organizationId' | 'memberId'>,
  data: Partial<Prisma.ReportUncheckedCreateInput> = {},
) {
  return prismaOf(app).report.create({
    data: { organizationId: owner.organizationId, reporterId: owner.memberId, title: 'Something broke', message: 'It broke.', metadata: {}, ...data },
  });
}
