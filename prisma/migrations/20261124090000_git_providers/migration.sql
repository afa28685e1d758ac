-- Git providers (issue 12): real provider enums, integrations bound to self-hosted servers, OAuth
-- states bound to the member who started the flow, code sources with their provider. The
-- placeholder GitAccount table goes: a server's accounts are the integrations connected through it.

DROP TABLE "GitAccount";

-- Integration provider: SCM -> GITHUB, SCM_ENTERPRISE -> GITHUB_ENTERPRISE.
ALTER TYPE "IntegrationProvider" RENAME TO "IntegrationProvider_old";
CREATE TYPE "IntegrationProvider" AS ENUM ('GITHUB', 'GITHUB_ENTERPRISE', 'GITLAB');
ALTER TABLE "Integration" ALTER COLUMN "provider" TYPE "IntegrationProvider"
  USING (CASE "provider"::text WHEN 'SCM' THEN 'GITHUB' ELSE 'GITHUB_ENTERPRISE' END)::"IntegrationProvider";
DROP TYPE "IntegrationProvider_old";

-- Integration status: ERROR -> NEEDS_ATTENTION, plus FAILED.
ALTER TABLE "Integration" ALTER COLUMN "status" DROP DEFAULT;
ALTER TYPE "IntegrationStatus" RENAME TO "IntegrationStatus_old";
CREATE TYPE "IntegrationStatus" AS ENUM ('INITIATED', 'ACTIVE', 'NEEDS_ATTENTION', 'FAILED', 'REVOKED');
ALTER TABLE "Integration" ALTER COLUMN "status" TYPE "IntegrationStatus"
  USING (CASE "status"::text WHEN 'ERROR' THEN 'NEEDS_ATTENTION' ELSE "status"::text END)::"IntegrationStatus";
ALTER TABLE "Integration" ALTER COLUMN "status" SET DEFAULT 'INITIATED';
DROP TYPE "IntegrationStatus_old";

ALTER TABLE "Integration"
  ADD COLUMN "gitServerId" TEXT,
  ADD COLUMN "installationId" TEXT,
  ADD COLUMN "lastError" TEXT,
  ADD COLUMN "createdById" TEXT,
  ADD COLUMN "credentialsExpireAt" TIMESTAMP(3);
CREATE INDEX "Integration_gitServerId_idx" ON "Integration"("gitServerId");
ALTER TABLE "Integration" ADD CONSTRAINT "Integration_gitServerId_fkey" FOREIGN KEY ("gitServerId") REFERENCES "GitServer"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- OAuth states name the member who started the flow; old unbound states are useless.
DELETE FROM "OAuthState";
ALTER TABLE "OAuthState" ADD COLUMN "memberId" TEXT NOT NULL;

-- Self-hosted server provider.
ALTER TYPE "GitServerProvider" RENAME TO "GitServerProvider_old";
CREATE TYPE "GitServerProvider" AS ENUM ('GITHUB_ENTERPRISE', 'GITLAB');
ALTER TABLE "GitServer" ALTER COLUMN "provider" TYPE "GitServerProvider"
  USING (CASE "provider"::text WHEN 'SCM_SELF_HOSTED' THEN 'GITHUB_ENTERPRISE' ELSE 'GITLAB' END)::"GitServerProvider";
DROP TYPE "GitServerProvider_old";

-- Code sources know their provider; the same owner/name may exist at two providers.
CREATE TYPE "CodeSourceProvider" AS ENUM ('GITHUB', 'GITHUB_ENTERPRISE', 'GITLAB', 'LOCAL_GIT');
ALTER TABLE "CodeSource" ADD COLUMN "provider" "CodeSourceProvider" NOT NULL DEFAULT 'GITHUB';
ALTER TABLE "CodeSource" ALTER COLUMN "provider" DROP DEFAULT;
DROP INDEX "CodeSource_organizationId_nameWithOwner_key";
CREATE UNIQUE INDEX "CodeSource_organizationId_provider_nameWithOwner_key" ON "CodeSource"("organizationId", "provider", "nameWithOwner");
CREATE INDEX "CodeSource_integrationId_idx" ON "CodeSource"("integrationId");
