-- Audit trail of security-relevant actions.
CREATE TABLE "AuditEvent" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "actorType" TEXT NOT NULL,
    "actorId" TEXT,
    "actorName" TEXT,
    "apiKeyId" TEXT,
    "action" TEXT NOT NULL,
    "targetType" TEXT NOT NULL,
    "targetId" TEXT NOT NULL,
    "requestId" TEXT,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AuditEvent_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "AuditEvent_organizationId_createdAt_id_idx" ON "AuditEvent"("organizationId", "createdAt", "id");
CREATE INDEX "AuditEvent_organizationId_action_createdAt_id_idx" ON "AuditEvent"("organizationId", "action", "createdAt", "id");
CREATE INDEX "AuditEvent_organizationId_targetType_targetId_createdAt_id_idx" ON "AuditEvent"("organizationId", "targetType", "targetId", "createdAt", "id");

ALTER TABLE "AuditEvent" ADD CONSTRAINT "AuditEvent_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Reports keep who sent them (a member or a service account) and the request id.
ALTER TABLE "Report" ADD COLUMN "reporterType" "ApiKeyOwnerType" NOT NULL DEFAULT 'MEMBERSHIP';
ALTER TABLE "Report" ADD COLUMN "requestId" TEXT;
CREATE INDEX "Report_createdAt_id_idx" ON "Report"("createdAt", "id");
