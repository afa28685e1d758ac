-- Managed wildcard domains (issue 15). The placeholder tables of the initial migration were never
-- written by any code, so they are replaced rather than altered.
DROP TABLE "DomainDependent";
DROP TABLE "ManagedDomain";
DROP TYPE "ManagedDomainStatus";

-- CreateEnum
CREATE TYPE "ManagedDomainStatus" AS ENUM ('PENDING_VERIFICATION', 'ACTIVE', 'LAPSED');

-- CreateEnum
CREATE TYPE "DomainDependentKind" AS ENUM ('PREVIEW_HOSTNAME', 'CHILD_APEX', 'OTHER');

-- CreateTable
CREATE TABLE "ManagedDomain" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "apex" TEXT NOT NULL,
    "status" "ManagedDomainStatus" NOT NULL DEFAULT 'PENDING_VERIFICATION',
    "verificationToken" TEXT NOT NULL,
    "verifiedAt" TIMESTAMP(3),
    "lastCheckedAt" TIMESTAMP(3),
    "recordMissingSince" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ManagedDomain_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DomainGrant" (
    "id" TEXT NOT NULL,
    "domainId" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DomainGrant_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DomainDependent" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "domainId" TEXT NOT NULL,
    "hostname" TEXT NOT NULL,
    "kind" "DomainDependentKind" NOT NULL,
    "resourceId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "DomainDependent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ManagedDomain_apex_key" ON "ManagedDomain"("apex");

-- CreateIndex
CREATE INDEX "ManagedDomain_organizationId_createdAt_id_idx" ON "ManagedDomain"("organizationId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "ManagedDomain_status_id_idx" ON "ManagedDomain"("status", "id");

-- CreateIndex
CREATE UNIQUE INDEX "DomainGrant_domainId_organizationId_key" ON "DomainGrant"("domainId", "organizationId");

-- CreateIndex
CREATE INDEX "DomainGrant_organizationId_idx" ON "DomainGrant"("organizationId");

-- CreateIndex
CREATE INDEX "DomainGrant_domainId_createdAt_id_idx" ON "DomainGrant"("domainId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "DomainDependent_domainId_hostname_key" ON "DomainDependent"("domainId", "hostname");

-- CreateIndex
CREATE INDEX "DomainDependent_domainId_createdAt_id_idx" ON "DomainDependent"("domainId", "createdAt", "id");

-- AddForeignKey
ALTER TABLE "ManagedDomain" ADD CONSTRAINT "ManagedDomain_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DomainGrant" ADD CONSTRAINT "DomainGrant_domainId_fkey" FOREIGN KEY ("domainId") REFERENCES "ManagedDomain"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DomainGrant" ADD CONSTRAINT "DomainGrant_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DomainDependent" ADD CONSTRAINT "DomainDependent_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DomainDependent" ADD CONSTRAINT "DomainDependent_domainId_fkey" FOREIGN KEY ("domainId") REFERENCES "ManagedDomain"("id") ON DELETE CASCADE ON UPDATE CASCADE;
