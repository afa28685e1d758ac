-- Issue 21 finding 8: an unverified (PENDING) registration no longer holds its apex. Several
-- organizations may each hold a pending claim; the first to verify wins (the service checks, under
-- a per-apex advisory lock, that no other organization's registration is ACTIVE or LAPSED).
DROP INDEX "ManagedDomain_apex_key";
CREATE UNIQUE INDEX "ManagedDomain_organizationId_apex_key" ON "ManagedDomain"("organizationId", "apex");
CREATE INDEX "ManagedDomain_apex_idx" ON "ManagedDomain"("apex");
