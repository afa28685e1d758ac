-- Issue 22 part 2: the total of a list with minVersion (one definition, versions at or above a
-- bound) is the versions of the later (major, minor) pairs, read from per-pair counters, plus the
-- versions of the bound's own pair counted over the order index: no longer every version above the
-- bound (a definition with thousands of versions counted thousands of index entries per page).
-- Kept by a row trigger beside the definitions' counters, in the publishing transaction.
CREATE TABLE "ModuleVersionMinorCount" (
  "moduleDefinitionId" TEXT NOT NULL,
  "versionMajor" INTEGER NOT NULL,
  "versionMinor" INTEGER NOT NULL,
  "versionCount" INTEGER NOT NULL DEFAULT 0,
  "releaseCount" INTEGER NOT NULL DEFAULT 0,
  CONSTRAINT "ModuleVersionMinorCount_pkey" PRIMARY KEY ("moduleDefinitionId", "versionMajor", "versionMinor"),
  CONSTRAINT "ModuleVersionMinorCount_moduleDefinitionId_fkey" FOREIGN KEY ("moduleDefinitionId") REFERENCES "ModuleDefinition"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

INSERT INTO "ModuleVersionMinorCount" ("moduleDefinitionId", "versionMajor", "versionMinor", "versionCount", "releaseCount")
SELECT "moduleDefinitionId", "versionMajor", "versionMinor", count(*)::int, (count(*) FILTER (WHERE "versionPrereleaseSortKey" = '~'))::int
FROM "ModuleVersion" GROUP BY 1, 2, 3;

CREATE FUNCTION "module_version_minor_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO "ModuleVersionMinorCount" AS c ("moduleDefinitionId", "versionMajor", "versionMinor", "versionCount", "releaseCount")
    VALUES (NEW."moduleDefinitionId", NEW."versionMajor", NEW."versionMinor", 1, CASE WHEN NEW."versionPrereleaseSortKey" = '~' THEN 1 ELSE 0 END)
    ON CONFLICT ("moduleDefinitionId", "versionMajor", "versionMinor") DO UPDATE
    SET "versionCount" = c."versionCount" + 1, "releaseCount" = c."releaseCount" + EXCLUDED."releaseCount";
    RETURN NEW;
  END IF;
  -- A cascade from the definition's own delete finds no row to update.
  UPDATE "ModuleVersionMinorCount"
  SET "versionCount" = "versionCount" - 1,
      "releaseCount" = "releaseCount" - CASE WHEN OLD."versionPrereleaseSortKey" = '~' THEN 1 ELSE 0 END
  WHERE "moduleDefinitionId" = OLD."moduleDefinitionId" AND "versionMajor" = OLD."versionMajor" AND "versionMinor" = OLD."versionMinor";
  RETURN OLD;
END;
$$;

CREATE TRIGGER "ModuleVersion_minor_counts"
AFTER INSERT OR DELETE ON "ModuleVersion"
FOR EACH ROW EXECUTE FUNCTION "module_version_minor_counts"();

-- The pair a version counts in is now one of its keys too: refuse changing it, as its definition
-- and prerelease already are (the API never does either).
CREATE OR REPLACE FUNCTION "module_version_immutable_keys"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."moduleDefinitionId" IS DISTINCT FROM OLD."moduleDefinitionId" OR NEW."versionPrereleaseSortKey" IS DISTINCT FROM OLD."versionPrereleaseSortKey"
     OR NEW."versionMajor" IS DISTINCT FROM OLD."versionMajor" OR NEW."versionMinor" IS DISTINCT FROM OLD."versionMinor" THEN
    RAISE EXCEPTION 'a module version''s definition and version are immutable';
  END IF;
  RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER "ModuleVersion_immutable_keys"
BEFORE UPDATE OF "moduleDefinitionId", "versionPrereleaseSortKey", "versionMajor", "versionMinor" ON "ModuleVersion"
FOR EACH ROW EXECUTE FUNCTION "module_version_immutable_keys"();
