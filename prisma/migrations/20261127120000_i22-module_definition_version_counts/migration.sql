-- Issue 22 part 2: the total of a module-version list over whole definitions (no minVersion) is read
-- from per-definition counters instead of counting every version on every page. Versions are never
-- updated in place (published, and deleted only with their definition or organization), so a row
-- trigger on insert and delete keeps the counters exact in the same transaction.
ALTER TABLE "ModuleDefinition"
  ADD COLUMN "versionCount" INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN "releaseCount" INTEGER NOT NULL DEFAULT 0;

UPDATE "ModuleDefinition" d
SET "versionCount" = c.n, "releaseCount" = c.releases
FROM (
  SELECT "moduleDefinitionId" AS id, count(*)::int AS n, (count(*) FILTER (WHERE "versionPrereleaseSortKey" = '~'))::int AS releases
  FROM "ModuleVersion" GROUP BY 1
) c
WHERE c.id = d."id";

CREATE FUNCTION "module_definition_version_counts"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE "ModuleDefinition"
    SET "versionCount" = "versionCount" + 1,
        "releaseCount" = "releaseCount" + CASE WHEN NEW."versionPrereleaseSortKey" = '~' THEN 1 ELSE 0 END
    WHERE "id" = NEW."moduleDefinitionId";
    RETURN NEW;
  END IF;
  -- A cascade from the definition's own delete finds no row to update.
  UPDATE "ModuleDefinition"
  SET "versionCount" = "versionCount" - 1,
      "releaseCount" = "releaseCount" - CASE WHEN OLD."versionPrereleaseSortKey" = '~' THEN 1 ELSE 0 END
  WHERE "id" = OLD."moduleDefinitionId";
  RETURN OLD;
END;
$$;

CREATE TRIGGER "ModuleVersion_counts"
AFTER INSERT OR DELETE ON "ModuleVersion"
FOR EACH ROW EXECUTE FUNCTION "module_definition_version_counts"();

-- A version that moved between definitions or changed its prerelease would leave the counters
-- wrong: refuse it (the API never does either).
CREATE FUNCTION "module_version_immutable_keys"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."moduleDefinitionId" IS DISTINCT FROM OLD."moduleDefinitionId" OR NEW."versionPrereleaseSortKey" IS DISTINCT FROM OLD."versionPrereleaseSortKey" THEN
    RAISE EXCEPTION 'a module version''s definition and version are immutable';
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER "ModuleVersion_immutable_keys"
BEFORE UPDATE OF "moduleDefinitionId", "versionPrereleaseSortKey" ON "ModuleVersion"
FOR EACH ROW EXECUTE FUNCTION "module_version_immutable_keys"();
