-- Module definitions: a name is unique per owner, an organization or global (organizationId NULL,
-- hence NULLS NOT DISTINCT); the unused givenId goes.
DROP INDEX "ModuleDefinition_organizationId_givenId_key";
ALTER TABLE "ModuleDefinition" DROP COLUMN "givenId";
CREATE UNIQUE INDEX "ModuleDefinition_organizationId_name_key" ON "ModuleDefinition"("organizationId", "name") NULLS NOT DISTINCT;

-- Module versions are ordered in Postgres by (major, minor, patch, prerelease sort key): the key's
-- byte order is semver precedence among equal major.minor.patch, so the column compares with
-- COLLATE "C" (in indexes and queries alike) and no query has to name the collation.
DROP INDEX "ModuleVersion_semver_order_idx";
DROP INDEX "ModuleVersion_moduleDefinitionId_version_key";
DROP INDEX "ModuleVersion_organizationId_createdAt_id_idx";
ALTER TABLE "ModuleVersion" ALTER COLUMN "versionPrereleaseSortKey" SET DATA TYPE TEXT COLLATE "C";

-- Equal precedence (build metadata ignored) is a duplicate.
CREATE UNIQUE INDEX "ModuleVersion_semver_precedence_key" ON "ModuleVersion"("moduleDefinitionId", "versionMajor", "versionMinor", "versionPatch", "versionPrereleaseSortKey");
-- The lists' keyset, per definition and per owner (an organization, or NULL for global).
CREATE INDEX "ModuleVersion_definition_semver_order_idx" ON "ModuleVersion"("moduleDefinitionId", "versionMajor", "versionMinor", "versionPatch", "versionPrereleaseSortKey", "id");
CREATE INDEX "ModuleVersion_organization_semver_order_idx" ON "ModuleVersion"("organizationId", "versionMajor", "versionMinor", "versionPatch", "versionPrereleaseSortKey", "id");
