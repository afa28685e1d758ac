-- CreateEnum
CREATE TYPE "Role" AS ENUM ('OWNER', 'ADMIN', 'MEMBER', 'VIEWER');

-- CreateEnum
CREATE TYPE "ApiKeyOwnerType" AS ENUM ('MEMBERSHIP', 'SERVICE_ACCOUNT');

-- CreateEnum
CREATE TYPE "ProjectStatus" AS ENUM ('ACTIVE', 'PROVISIONING', 'ERROR', 'ARCHIVED');

-- CreateEnum
CREATE TYPE "PipelineRunStatus" AS ENUM ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED');

-- CreateEnum
CREATE TYPE "ExecutionEnvironmentType" AS ENUM ('CLOUD_VPC', 'ON_PREMISES');

-- CreateEnum
CREATE TYPE "IntegrationProvider" AS ENUM ('SCM', 'SCM_ENTERPRISE');

-- CreateEnum
CREATE TYPE "IntegrationAuthMethod" AS ENUM ('API_TOKEN', 'OAUTH', 'APP_INSTALLATION');

-- CreateEnum
CREATE TYPE "IntegrationStatus" AS ENUM ('INITIATED', 'ACTIVE', 'ERROR', 'REVOKED');

-- CreateEnum
CREATE TYPE "GitServerProvider" AS ENUM ('SCM_SELF_HOSTED', 'GITLAB_SELF_MANAGED', 'GITEA');

-- CreateEnum
CREATE TYPE "MergeQueueStatus" AS ENUM ('idle', 'active', 'paused', 'migrating', 'disabled');

-- CreateEnum
CREATE TYPE "MergeQueueBatchStatus" AS ENUM ('preparing', 'testing', 'ready', 'merging', 'reconciling', 'landed', 'failed', 'withdrawn');

-- CreateEnum
CREATE TYPE "MergeQueueEntryStatus" AS ENUM ('queued', 'testing', 'blocked', 'merging', 'merged', 'removed', 'failed');

-- CreateEnum
CREATE TYPE "MergeQueueOperationKind" AS ENUM ('prepare', 'publish', 'startCi', 'land', 'readBack', 'cleanup');

-- CreateEnum
CREATE TYPE "MergeQueueOperationOutcome" AS ENUM ('pending', 'running', 'unknown', 'succeeded', 'failed');

-- CreateEnum
CREATE TYPE "ManagedDomainStatus" AS ENUM ('PENDING', 'LIVE', 'FAILED');

-- CreateEnum
CREATE TYPE "UsageImportStatus" AS ENUM ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED');

-- CreateTable
CREATE TABLE "Organization" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Member" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT,
    "role" "Role" NOT NULL DEFAULT 'MEMBER',
    "isSuperadmin" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Member_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "ownerId" TEXT NOT NULL,
    "ownerType" "ApiKeyOwnerType" NOT NULL,
    "createdById" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "keySuffix" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3),
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ServiceAccount" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "role" "Role" NOT NULL DEFAULT 'MEMBER',
    "createdById" TEXT NOT NULL,
    "createdByName" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ServiceAccount_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Project" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "givenId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "status" "ProjectStatus" NOT NULL DEFAULT 'ACTIVE',
    "error" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Project_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Pipeline" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "projectId" TEXT NOT NULL,
    "givenId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "latestRunId" TEXT,
    "latestRunStatus" "PipelineRunStatus",
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Pipeline_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PipelineVersion" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "definition" JSONB NOT NULL,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PipelineVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ExecutionEnvironment" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "givenId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "type" "ExecutionEnvironmentType" NOT NULL,
    "region" TEXT NOT NULL,
    "vpcId" TEXT NOT NULL,
    "subnetId" TEXT NOT NULL,
    "securityGroupId" TEXT NOT NULL,
    "cloudAccountId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ExecutionEnvironment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Integration" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "givenId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "provider" "IntegrationProvider" NOT NULL,
    "authMethod" "IntegrationAuthMethod" NOT NULL,
    "status" "IntegrationStatus" NOT NULL DEFAULT 'INITIATED',
    "externalAccountId" TEXT NOT NULL,
    "externalAccountName" TEXT,
    "lastValidatedAt" TIMESTAMP(3),
    "encryptedCredentials" BYTEA,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Integration_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "OAuthState" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "integrationId" TEXT NOT NULL,
    "stateHash" TEXT NOT NULL,
    "redirectUrl" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "consumedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "OAuthState_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GitServer" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "provider" "GitServerProvider" NOT NULL,
    "hostUrl" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "GitServer_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "GitAccount" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "gitServerId" TEXT NOT NULL,
    "username" TEXT NOT NULL,
    "encryptedCredentials" BYTEA,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "GitAccount_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CodeSource" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "integrationId" TEXT,
    "gitServerId" TEXT,
    "foreignId" TEXT NOT NULL,
    "nameWithOwner" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CodeSource_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MergeQueue" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "repositoryId" TEXT NOT NULL,
    "baseRef" TEXT NOT NULL,
    "revision" BIGINT NOT NULL DEFAULT 0,
    "status" "MergeQueueStatus" NOT NULL DEFAULT 'idle',
    "batchDepth" INTEGER NOT NULL DEFAULT 1,
    "settings" JSONB NOT NULL,
    "plannerState" JSONB,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MergeQueue_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MergeQueueEntry" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "queueId" TEXT NOT NULL,
    "number" INTEGER NOT NULL,
    "headSha" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "title" TEXT,
    "status" "MergeQueueEntryStatus" NOT NULL DEFAULT 'queued',
    "position" INTEGER NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "setAside" BOOLEAN NOT NULL DEFAULT false,
    "batchId" TEXT,
    "block" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MergeQueueEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MergeQueueBatch" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "queueId" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "prNumbers" INTEGER[] NOT NULL,
    "status" "MergeQueueBatchStatus" NOT NULL DEFAULT 'preparing',
    "requiredChecks" JSONB NOT NULL,
    "checksUrl" TEXT,
    "headSha" TEXT,
    "baseSha" TEXT,
    "operationKind" "MergeQueueOperationKind",
    "operationOutcome" "MergeQueueOperationOutcome",
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MergeQueueBatch_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "MergeQueueOperation" (
    "id" TEXT NOT NULL,
    "queueId" TEXT NOT NULL,
    "batchId" TEXT,
    "kind" "MergeQueueOperationKind" NOT NULL,
    "outcome" "MergeQueueOperationOutcome" NOT NULL DEFAULT 'pending',
    "payload" JSONB NOT NULL,
    "result" JSONB,
    "idempotencyKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "MergeQueueOperation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModuleDefinition" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT,
    "givenId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModuleDefinition_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModuleVersion" (
    "id" TEXT NOT NULL,
    "moduleDefinitionId" TEXT NOT NULL,
    "organizationId" TEXT,
    "version" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "config" JSONB NOT NULL,
    "versionMajor" INTEGER NOT NULL,
    "versionMinor" INTEGER NOT NULL,
    "versionPatch" INTEGER NOT NULL,
    "versionPrereleaseSortKey" TEXT NOT NULL,
    "versionPrereleaseRank" INTEGER,
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModuleVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ManagedDomain" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "apex" TEXT NOT NULL,
    "status" "ManagedDomainStatus" NOT NULL DEFAULT 'PENDING',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ManagedDomain_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DomainDependent" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "domainId" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DomainDependent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Report" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "reporterId" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "metadata" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Report_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UsageImport" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "codeSourceId" TEXT NOT NULL,
    "status" "UsageImportStatus" NOT NULL DEFAULT 'QUEUED',
    "activeKey" TEXT,
    "progress" INTEGER NOT NULL DEFAULT 0,
    "importedRuns" INTEGER NOT NULL DEFAULT 0,
    "cursor" TEXT,
    "error" JSONB,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "UsageImport_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CiUsageRecord" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "codeSourceId" TEXT NOT NULL,
    "externalRunId" TEXT NOT NULL,
    "workflowName" TEXT NOT NULL,
    "conclusion" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "durationSeconds" INTEGER NOT NULL,
    "billableMinutes" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CiUsageRecord_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Organization_name_key" ON "Organization"("name");

-- CreateIndex
CREATE INDEX "Member_organizationId_createdAt_id_idx" ON "Member"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Member_organizationId_email_key" ON "Member"("organizationId", "email");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_tokenHash_key" ON "ApiKey"("tokenHash");

-- CreateIndex
CREATE INDEX "ApiKey_organizationId_createdAt_id_idx" ON "ApiKey"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "ApiKey_ownerType_ownerId_idx" ON "ApiKey"("ownerType", "ownerId");

-- CreateIndex
CREATE INDEX "ServiceAccount_organizationId_createdAt_id_idx" ON "ServiceAccount"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ServiceAccount_organizationId_name_key" ON "ServiceAccount"("organizationId", "name");

-- CreateIndex
CREATE INDEX "Project_organizationId_createdAt_id_idx" ON "Project"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Project_organizationId_givenId_key" ON "Project"("organizationId", "givenId");

-- CreateIndex
CREATE INDEX "Pipeline_organizationId_createdAt_id_idx" ON "Pipeline"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Pipeline_projectId_givenId_key" ON "Pipeline"("projectId", "givenId");

-- CreateIndex
CREATE INDEX "PipelineVersion_organizationId_createdAt_id_idx" ON "PipelineVersion"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "PipelineVersion_pipelineId_version_key" ON "PipelineVersion"("pipelineId", "version");

-- CreateIndex
CREATE INDEX "ExecutionEnvironment_organizationId_createdAt_id_idx" ON "ExecutionEnvironment"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ExecutionEnvironment_organizationId_givenId_key" ON "ExecutionEnvironment"("organizationId", "givenId");

-- CreateIndex
CREATE INDEX "Integration_organizationId_createdAt_id_idx" ON "Integration"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Integration_organizationId_givenId_key" ON "Integration"("organizationId", "givenId");

-- CreateIndex
CREATE UNIQUE INDEX "OAuthState_stateHash_key" ON "OAuthState"("stateHash");

-- CreateIndex
CREATE INDEX "OAuthState_expiresAt_idx" ON "OAuthState"("expiresAt");

-- CreateIndex
CREATE INDEX "GitServer_organizationId_createdAt_id_idx" ON "GitServer"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "GitServer_organizationId_hostUrl_key" ON "GitServer"("organizationId", "hostUrl");

-- CreateIndex
CREATE INDEX "GitAccount_organizationId_idx" ON "GitAccount"("organizationId");

-- CreateIndex
CREATE UNIQUE INDEX "GitAccount_gitServerId_username_key" ON "GitAccount"("gitServerId", "username");

-- CreateIndex
CREATE INDEX "CodeSource_organizationId_createdAt_id_idx" ON "CodeSource"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "CodeSource_organizationId_nameWithOwner_key" ON "CodeSource"("organizationId", "nameWithOwner");

-- CreateIndex
CREATE INDEX "MergeQueue_organizationId_createdAt_id_idx" ON "MergeQueue"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "MergeQueue_repositoryId_baseRef_key" ON "MergeQueue"("repositoryId", "baseRef");

-- CreateIndex
CREATE INDEX "MergeQueueEntry_queueId_status_position_idx" ON "MergeQueueEntry"("queueId", "status", "position");

-- CreateIndex
CREATE INDEX "MergeQueueEntry_queueId_number_idx" ON "MergeQueueEntry"("queueId", "number");

-- CreateIndex
CREATE INDEX "MergeQueueBatch_queueId_status_position_idx" ON "MergeQueueBatch"("queueId", "status", "position");

-- CreateIndex
CREATE UNIQUE INDEX "MergeQueueOperation_idempotencyKey_key" ON "MergeQueueOperation"("idempotencyKey");

-- CreateIndex
CREATE INDEX "MergeQueueOperation_queueId_outcome_createdAt_idx" ON "MergeQueueOperation"("queueId", "outcome", "createdAt");

-- CreateIndex
CREATE INDEX "ModuleDefinition_organizationId_createdAt_id_idx" ON "ModuleDefinition"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ModuleDefinition_organizationId_givenId_key" ON "ModuleDefinition"("organizationId", "givenId");

-- CreateIndex
CREATE INDEX "ModuleVersion_semver_order_idx" ON "ModuleVersion"("moduleDefinitionId", "versionMajor", "versionMinor", "versionPatch", "versionPrereleaseSortKey");

-- CreateIndex
CREATE INDEX "ModuleVersion_organizationId_createdAt_id_idx" ON "ModuleVersion"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "ModuleVersion_moduleDefinitionId_version_key" ON "ModuleVersion"("moduleDefinitionId", "version");

-- CreateIndex
CREATE UNIQUE INDEX "ManagedDomain_apex_key" ON "ManagedDomain"("apex");

-- CreateIndex
CREATE INDEX "ManagedDomain_organizationId_createdAt_id_idx" ON "ManagedDomain"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "DomainDependent_hostname_key" ON "DomainDependent"("hostname");

-- CreateIndex
CREATE INDEX "DomainDependent_domainId_idx" ON "DomainDependent"("domainId");

-- CreateIndex
CREATE INDEX "Report_organizationId_createdAt_id_idx" ON "Report"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "UsageImport_activeKey_key" ON "UsageImport"("activeKey");

-- CreateIndex
CREATE INDEX "UsageImport_organizationId_createdAt_id_idx" ON "UsageImport"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "UsageImport_codeSourceId_finishedAt_idx" ON "UsageImport"("codeSourceId", "finishedAt");

-- CreateIndex
CREATE INDEX "CiUsageRecord_organizationId_startedAt_idx" ON "CiUsageRecord"("organizationId", "startedAt");

-- CreateIndex
CREATE UNIQUE INDEX "CiUsageRecord_codeSourceId_externalRunId_key" ON "CiUsageRecord"("codeSourceId", "externalRunId");

-- AddForeignKey
ALTER TABLE "Member" ADD CONSTRAINT "Member_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ServiceAccount" ADD CONSTRAINT "ServiceAccount_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Project" ADD CONSTRAINT "Project_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Pipeline" ADD CONSTRAINT "Pipeline_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Pipeline" ADD CONSTRAINT "Pipeline_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PipelineVersion" ADD CONSTRAINT "PipelineVersion_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "PipelineVersion" ADD CONSTRAINT "PipelineVersion_pipelineId_fkey" FOREIGN KEY ("pipelineId") REFERENCES "Pipeline"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ExecutionEnvironment" ADD CONSTRAINT "ExecutionEnvironment_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Integration" ADD CONSTRAINT "Integration_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OAuthState" ADD CONSTRAINT "OAuthState_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "OAuthState" ADD CONSTRAINT "OAuthState_integrationId_fkey" FOREIGN KEY ("integrationId") REFERENCES "Integration"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GitServer" ADD CONSTRAINT "GitServer_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GitAccount" ADD CONSTRAINT "GitAccount_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "GitAccount" ADD CONSTRAINT "GitAccount_gitServerId_fkey" FOREIGN KEY ("gitServerId") REFERENCES "GitServer"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CodeSource" ADD CONSTRAINT "CodeSource_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CodeSource" ADD CONSTRAINT "CodeSource_integrationId_fkey" FOREIGN KEY ("integrationId") REFERENCES "Integration"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CodeSource" ADD CONSTRAINT "CodeSource_gitServerId_fkey" FOREIGN KEY ("gitServerId") REFERENCES "GitServer"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueue" ADD CONSTRAINT "MergeQueue_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueue" ADD CONSTRAINT "MergeQueue_repositoryId_fkey" FOREIGN KEY ("repositoryId") REFERENCES "CodeSource"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueEntry" ADD CONSTRAINT "MergeQueueEntry_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueEntry" ADD CONSTRAINT "MergeQueueEntry_queueId_fkey" FOREIGN KEY ("queueId") REFERENCES "MergeQueue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueEntry" ADD CONSTRAINT "MergeQueueEntry_batchId_fkey" FOREIGN KEY ("batchId") REFERENCES "MergeQueueBatch"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueBatch" ADD CONSTRAINT "MergeQueueBatch_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueBatch" ADD CONSTRAINT "MergeQueueBatch_queueId_fkey" FOREIGN KEY ("queueId") REFERENCES "MergeQueue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueOperation" ADD CONSTRAINT "MergeQueueOperation_queueId_fkey" FOREIGN KEY ("queueId") REFERENCES "MergeQueue"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MergeQueueOperation" ADD CONSTRAINT "MergeQueueOperation_batchId_fkey" FOREIGN KEY ("batchId") REFERENCES "MergeQueueBatch"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModuleDefinition" ADD CONSTRAINT "ModuleDefinition_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModuleVersion" ADD CONSTRAINT "ModuleVersion_moduleDefinitionId_fkey" FOREIGN KEY ("moduleDefinitionId") REFERENCES "ModuleDefinition"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ModuleVersion" ADD CONSTRAINT "ModuleVersion_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ManagedDomain" ADD CONSTRAINT "ManagedDomain_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DomainDependent" ADD CONSTRAINT "DomainDependent_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DomainDependent" ADD CONSTRAINT "DomainDependent_domainId_fkey" FOREIGN KEY ("domainId") REFERENCES "ManagedDomain"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Report" ADD CONSTRAINT "Report_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UsageImport" ADD CONSTRAINT "UsageImport_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UsageImport" ADD CONSTRAINT "UsageImport_codeSourceId_fkey" FOREIGN KEY ("codeSourceId") REFERENCES "CodeSource"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CiUsageRecord" ADD CONSTRAINT "CiUsageRecord_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CiUsageRecord" ADD CONSTRAINT "CiUsageRecord_codeSourceId_fkey" FOREIGN KEY ("codeSourceId") REFERENCES "CodeSource"("id") ON DELETE CASCADE ON UPDATE CASCADE;
