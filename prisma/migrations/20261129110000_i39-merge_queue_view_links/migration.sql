-- Issue 39: signed, expiring, revocable links to a merge queue's page. The token is never stored
-- (it is derived from the row and a server key); a link shows nothing once revoked or expired.
CREATE TABLE "MergeQueueViewLink" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "queueId" TEXT NOT NULL,
    "forStatuses" BOOLEAN NOT NULL DEFAULT false,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "createdBy" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MergeQueueViewLink_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "MergeQueueViewLink_queueId_createdAt_id_idx" ON "MergeQueueViewLink"("queueId", "createdAt", "id");

ALTER TABLE "MergeQueueViewLink" ADD CONSTRAINT "MergeQueueViewLink_organizationId_fkey" FOREIGN KEY ("organizationId") REFERENCES "Organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "MergeQueueViewLink" ADD CONSTRAINT "MergeQueueViewLink_queueId_fkey" FOREIGN KEY ("queueId") REFERENCES "MergeQueue"("id") ON DELETE CASCADE ON UPDATE CASCADE;
