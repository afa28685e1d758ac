-- Issue 22 part 2: the total of the list of every visible version (no definition filter) is read
-- from counters kept per owner (an organization, or '' for the global versions), as the totals over
-- whole definitions already are, instead of counting the organization's versions on every page (a
-- sequential scan of 72,000 rows, about 55 ms, for an organization seeing 90,000 of 100,000 versions).
-- Summing the visible definitions' counters instead would read one row per definition (about 3 ms
-- for 900 definitions, growing with them). Kept by the row trigger of the other counters (below), in
-- the publishing transaction; publishing in one organization waits for the others' commits on its row.

-- No version is published between the counters' first count and their trigger (the migration is one
-- transaction; each of its statements would otherwise read its own snapshot).
LOCK TABLE "ModuleVersion" IN SHARE ROW EXCLUSIVE MODE;

-- Versions written in another organization than their definition's before this migration (the API
-- wrote none; see below) take their definition's, before the counters count them.
UPDATE "ModuleVersion" v
SET "organizationId" = md."organizationId"
FROM "ModuleDefinition" md
WHERE md."id" = v."moduleDefinitionId" AND v."organizationId" IS DISTINCT FROM md."organizationId";

CREATE TABLE "ModuleVersionOwnerCount" (
  "ownerId" TEXT NOT NULL,
  "versionCount" INTEGER NOT NULL DEFAULT 0,
  "releaseCount" INTEGER NOT NULL DEFAULT 0,
  CONSTRAINT "ModuleVersionOwnerCount_pkey" PRIMARY KEY ("ownerId")
);

INSERT INTO "ModuleVersionOwnerCount" ("ownerId", "versionCount", "releaseCount")
SELECT coalesce("organizationId", ''), count(*)::int, (count(*) FILTER (WHERE "versionPrereleaseSortKey" = '~'))::int
FROM "ModuleVersion" GROUP BY 1;

-- One trigger function now keeps the three counters of a version (its definition's, its (major,
-- minor) pair's, its owner's) instead of one function and one trigger each: one call per row, and the
-- counting written once. It takes their locks in the order the three triggers took them (by name).
DROP TRIGGER "ModuleVersion_counts" ON "ModuleVersion";
DROP TRIGGER "ModuleVersion_minor_counts" ON "ModuleVersion";
DROP FUNCTION "module_definition_version_counts"();
DROP FUNCTION "module_version_minor_counts"();

CREATE FUNCTION "module_version_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v "ModuleVersion";
  step INTEGER;
  releases INTEGER;
  left_over INTEGER;
BEGIN
  -- The row counted, and by how much: +1 when inserted, -1 when deleted; releases only for a release.
  IF TG_OP = 'INSERT' THEN
    v := NEW;
    step := 1;
  ELSE
    v := OLD;
    step := -1;
  END IF;
  releases := CASE WHEN v."versionPrereleaseSortKey" = '~' THEN step ELSE 0 END;

  -- A cascade from the definition's own delete finds no definition or pair row to update.
  UPDATE "ModuleDefinition" SET "versionCount" = "versionCount" + step, "releaseCount" = "releaseCount" + releases
  WHERE "id" = v."moduleDefinitionId";
  IF step = 1 THEN
    INSERT INTO "ModuleVersionMinorCount" AS c ("moduleDefinitionId", "versionMajor", "versionMinor", "versionCount", "releaseCount")
    VALUES (v."moduleDefinitionId", v."versionMajor", v."versionMinor", 1, releases)
    ON CONFLICT ("moduleDefinitionId", "versionMajor", "versionMinor") DO UPDATE
    SET "versionCount" = c."versionCount" + 1, "releaseCount" = c."releaseCount" + EXCLUDED."releaseCount";
    INSERT INTO "ModuleVersionOwnerCount" AS c ("ownerId", "versionCount", "releaseCount")
    VALUES (coalesce(v."organizationId", ''), 1, releases)
    ON CONFLICT ("ownerId") DO UPDATE
    SET "versionCount" = c."versionCount" + 1, "releaseCount" = c."releaseCount" + EXCLUDED."releaseCount";
    RETURN v;
  END IF;
  UPDATE "ModuleVersionMinorCount" SET "versionCount" = "versionCount" - 1, "releaseCount" = "releaseCount" + releases
  WHERE "moduleDefinitionId" = v."moduleDefinitionId" AND "versionMajor" = v."versionMajor" AND "versionMinor" = v."versionMinor";
  UPDATE "ModuleVersionOwnerCount" SET "versionCount" = "versionCount" - 1, "releaseCount" = "releaseCount" + releases
  WHERE "ownerId" = coalesce(v."organizationId", '')
  RETURNING "versionCount" INTO left_over;
  -- An organization deleted with its versions leaves no row behind.
  IF left_over = 0 THEN
    DELETE FROM "ModuleVersionOwnerCount" WHERE "ownerId" = coalesce(v."organizationId", '') AND "versionCount" = 0;
  END IF;
  RETURN v;
END;
$$;

CREATE TRIGGER "ModuleVersion_counts"
AFTER INSERT OR DELETE ON "ModuleVersion"
FOR EACH ROW EXECUTE FUNCTION "module_version_counts"();

-- A version belongs to its definition's organization, which the API always wrote (publishing copies
-- it) and the lists rely on (a definition's visibility decides the lists by definition, the version's
-- organization the list of every visible version and the counters above). The database now keeps
-- it: a version inserted with another organization is refused, and neither a version's nor a
-- definition's organization changes.
CREATE FUNCTION "module_version_owner"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM "ModuleDefinition" md WHERE md."id" = NEW."moduleDefinitionId" AND md."organizationId" IS DISTINCT FROM NEW."organizationId") THEN
    RAISE EXCEPTION 'a module version''s organization is its definition''s';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "ModuleVersion_owner"
BEFORE INSERT ON "ModuleVersion"
FOR EACH ROW EXECUTE FUNCTION "module_version_owner"();

-- The organization joins a version's immutable keys (its definition, major, minor and prerelease).
CREATE OR REPLACE FUNCTION "module_version_immutable_keys"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."moduleDefinitionId" IS DISTINCT FROM OLD."moduleDefinitionId" OR NEW."versionPrereleaseSortKey" IS DISTINCT FROM OLD."versionPrereleaseSortKey"
     OR NEW."versionMajor" IS DISTINCT FROM OLD."versionMajor" OR NEW."versionMinor" IS DISTINCT FROM OLD."versionMinor"
     OR NEW."organizationId" IS DISTINCT FROM OLD."organizationId" THEN
    RAISE EXCEPTION 'a module version''s definition, organization and version are immutable';
  END IF;
  RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER "ModuleVersion_immutable_keys"
BEFORE UPDATE OF "moduleDefinitionId", "versionPrereleaseSortKey", "versionMajor", "versionMinor", "organizationId" ON "ModuleVersion"
FOR EACH ROW EXECUTE FUNCTION "module_version_immutable_keys"();

-- A definition keeps its organization (global or one organization's): its versions' is the same.
CREATE FUNCTION "module_definition_immutable_owner"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."organizationId" IS DISTINCT FROM OLD."organizationId" THEN
    RAISE EXCEPTION 'a module definition''s organization is immutable';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "ModuleDefinition_immutable_owner"
BEFORE UPDATE OF "organizationId" ON "ModuleDefinition"
FOR EACH ROW EXECUTE FUNCTION "module_definition_immutable_owner"();
