-- CI usage import (issue 13): imports with a Postgres checkpoint (the next page of workflow runs),
-- workflow runs and jobs keyed by the provider's ids. The placeholder tables held nothing.

DROP TABLE "CiUsageRecord";
DROP TABLE "UsageImport";

CREATE TYPE "CiRunnerOs" AS ENUM ('UBUNTU', 'MACOS', 'WINDOWS', 'SELF_HOSTED');

CREATE TABLE "UsageImport" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "codeSourceId" TEXT NOT NULL,
    "status" "UsageImportStatus" NOT NULL DEFAULT 'QUEUED',
    "nextPage" INTEGER NOT NULL DEFAULT 1,
    "pagesDone" INTEGER NOT NULL DEFAULT 0,
    "runsImported" INTEGER NOT NULL DEFAULT 0,
    "jobsImported" INTEGER NOT NULL DEFAULT 0,
    "since" TIMESTAMP(3),
    "rateLimitedUntil" TIMESTAMP(3),
    "lastError" TEXT,
    "startedAt" TIMESTAMP(3),
    "finishedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "UsageImport_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "CiUsageRecord" (
    "organizationId" TEXT NOT NULL,
    "codeSourceId" TEXT NOT NULL,
    "externalRunId" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "workflowName" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "conclusion" TEXT,
    "runAttempt" INTEGER NOT NULL,
    "runCreatedAt" TIMESTAMP(3) NOT NULL,
    "runStartedAt" TIMESTAMP(3),
    "runUpdatedAt" TIMESTAMP(3) NOT NULL,
    "importedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CiUsageRecord_pkey" PRIMARY KEY ("codeSourceId","externalRunId")
);

CREATE TABLE "CiJobUsage" (
    "organizationId" TEXT NOT NULL,
    "codeSourceId" TEXT NOT NULL,
    "externalJobId" TEXT NOT NULL,
    "externalRunId" TEXT NOT NULL,
    "workflowName" TEXT NOT NULL,
    "runCreatedAt" TIMESTAMP(3) NOT NULL,
    "name" TEXT NOT NULL,
    "runnerOs" "CiRunnerOs" NOT NULL,
    "conclusion" TEXT,
    "startedAt" TIMESTAMP(3),
    "completedAt" TIMESTAMP(3),
    "durationSeconds" INTEGER NOT NULL,
    "billableMinutes" INTEGER NOT NULL,

    CONSTRAINT "CiJobUsage_pkey" PRIMARY KEY ("codeSourceId","externalJobId")
);

CREATE INDEX "UsageImport_organizationId_createdAt_id_idx" ON "UsageImport"("organizationId", "createdAt", "id");
CREATE INDEX "UsageImport_codeSourceId_status_finishedAt_idx" ON "UsageImport"("codeSourceId", "status", "finishedAt");
CREATE INDEX "CiUsageRecord_organizationId_runCreatedAt_idx" ON "CiUsageRecord"("organizationId", "runCreatedAt");
CREATE INDEX "CiJobUsage_organizationId_runCreatedAt_idx" ON "CiJobUsage"("organizationId", "runCreatedAt");

ALTER TABLE "UsageImport" ADD CONSTRAINT "UsageImport_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "UsageImport" ADD CONSTRAINT "UsageImport_codeSourceId_fkey" FOREIGN KEY ("codeSourceId") REFERENCES "CodeSource"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CiUsageRecord" ADD CONSTRAINT "CiUsageRecord_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CiUsageRecord" ADD CONSTRAINT "CiUsageRecord_codeSourceId_fkey" FOREIGN KEY ("codeSourceId") REFERENCES "CodeSource"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CiJobUsage" ADD CONSTRAINT "CiJobUsage_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "CiJobUsage" ADD CONSTRAINT "CiJobUsage_codeSourceId_fkey" FOREIGN KEY ("codeSourceId") REFERENCES "CodeSource"("id") ON DELETE CASCADE ON UPDATE CASCADE;
