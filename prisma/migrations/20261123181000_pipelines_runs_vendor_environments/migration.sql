-- Execution environment types name the cloud vendor. Existing rows are mapped by the shape of their
-- identifiers: a 12-digit account id is AWS's; a region like "europe-west1" (no dash before the
-- digits) with a non-numeric account is GCP's; everything else, ON_PREMISES included, becomes AWS.
ALTER TYPE "ExecutionEnvironmentType" RENAME TO "ExecutionEnvironmentType_old";
CREATE TYPE "ExecutionEnvironmentType" AS ENUM ('AWS', 'GCP');
ALTER TABLE "ExecutionEnvironment" ALTER COLUMN "type" TYPE "ExecutionEnvironmentType" USING (
  CASE
    WHEN "cloudAccountId" ~ '^[0-9]{12}$' THEN 'AWS'
    WHEN "region" ~ '^[a-z]+-[a-z]+[0-9]+$' THEN 'GCP'
    ELSE 'AWS'
  END
)::"ExecutionEnvironmentType";
DROP TYPE "ExecutionEnvironmentType_old";

-- One spelling for the cancelled run status: CANCELED.
ALTER TYPE "PipelineRunStatus" RENAME VALUE 'CANCELLED' TO 'CANCELED';

CREATE TABLE "PipelineVersionEnvironment" (
    "pipelineVersionId" TEXT NOT NULL,
    "executionEnvironmentId" TEXT NOT NULL,

    CONSTRAINT "PipelineVersionEnvironment_pkey" PRIMARY KEY ("pipelineVersionId", "executionEnvironmentId")
);
CREATE INDEX "PipelineVersionEnvironment_executionEnvironmentId_idx" ON "PipelineVersionEnvironment"("executionEnvironmentId");
ALTER TABLE "PipelineVersionEnvironment" ADD CONSTRAINT "PipelineVersionEnvironment_pipelineVersionId_fkey" FOREIGN KEY ("pipelineVersionId") REFERENCES "PipelineVersion"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PipelineVersionEnvironment" ADD CONSTRAINT "PipelineVersionEnvironment_executionEnvironmentId_fkey" FOREIGN KEY ("executionEnvironmentId") REFERENCES "ExecutionEnvironment"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

CREATE TABLE "PipelineRun" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "pipelineId" TEXT NOT NULL,
    "pipelineVersionId" TEXT NOT NULL,
    "status" "PipelineRunStatus" NOT NULL DEFAULT 'QUEUED',
    "createdById" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "PipelineRun_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "PipelineRun_pipelineId_createdAt_id_idx" ON "PipelineRun"("pipelineId", "createdAt", "id");
CREATE INDEX "PipelineRun_pipelineVersionId_idx" ON "PipelineRun"("pipelineVersionId");
CREATE INDEX "PipelineRun_organizationId_createdAt_id_idx" ON "PipelineRun"("organizationId", "createdAt", "id");
ALTER TABLE "PipelineRun" ADD CONSTRAINT "PipelineRun_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PipelineRun" ADD CONSTRAINT "PipelineRun_pipelineId_fkey" FOREIGN KEY ("pipelineId") REFERENCES "Pipeline"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "PipelineRun" ADD CONSTRAINT "PipelineRun_pipelineVersionId_fkey" FOREIGN KEY ("pipelineVersionId") REFERENCES "PipelineVersion"("id") ON DELETE CASCADE ON UPDATE CASCADE;
