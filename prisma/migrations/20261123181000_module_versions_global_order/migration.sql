-- The global versions' order. Partial: `organizationId IS NULL` does not give the planner the
-- order of ModuleVersion_organization_semver_order_idx (only `=` does), so without it the global
-- half of a list would sort every global version.
CREATE INDEX "ModuleVersion_global_semver_order_idx" ON "ModuleVersion"("versionMajor", "versionMinor", "versionPatch", "versionPrereleaseSortKey", "id") WHERE "organizationId" IS NULL;
