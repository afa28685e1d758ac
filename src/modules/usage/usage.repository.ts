import { Injectable } from '@nestjs/common';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { ListSource } from '@/common/pagination/pagination';
import { Prisma, type CodeSource, type Integration, type UsageImport } from '@/generated/prisma/client';
import type { WorkflowJob, WorkflowRun } from '@/modules/git-providers/git-provider.port';
import { incrementalSince, jobMinutes, runnerOs } from './usage-rules';

/** Time in a worker (ms) and provider bytes an import spent since it last wrote them. */
export interface Spent {
  ms: number;
  bytes: number;
}

const NOTHING: Spent = { ms: 0, bytes: 0 };

const increments = (spent: Spent) => ({ runningMs: { increment: Math.round(spent.ms) }, bytesRead: { increment: spent.bytes } });

/** Providers whose code sources have CI usage to import (GitHub Actions). */
export const USAGE_PROVIDERS = ['GITHUB', 'GITHUB_ENTERPRISE'] as const;

export interface UsageGroupRow {
  codeSourceId: string;
  workflowName: string;
  day: string;
  runs: number;
  byRunnerOs: { runnerOs: string; jobs: number; billableMinutes: number }[];
}

export interface UsageFilter {
  codeSourceId?: string;
  /** Inclusive UTC days, YYYY-MM-DD. */
  from?: string;
  to?: string;
}

/** Everything the usage domain reads and writes in Postgres; every method takes the organization id. */
@Injectable()
export class UsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Connected code sources: repositories of the organization's ACTIVE integrations on providers with CI usage. */
  connectedSources(organizationId: string): Promise<{ id: string }[]> {
    return this.prisma.codeSource.findMany({
      where: { organizationId, provider: { in: [...USAGE_PROVIDERS] }, integration: { status: 'ACTIVE', organizationId } },
      select: { id: true },
      orderBy: { createdAt: 'asc' },
    });
  }

  /** Rows for newly enqueued imports; the worker may have created one already (it creates what it does not find). */
  async createQueued(organizationId: string, imports: { id: string; codeSourceId: string }[]): Promise<void> {
    if (imports.length === 0) return;
    await this.prisma.usageImport.createMany({ data: imports.map((i) => ({ ...i, organizationId })), skipDuplicates: true });
  }

  /**
   * Whether any connected source lacks a successful import finished after `freshAfter`, and the
   * latest provider reset among the organization's waiting or running imports. One statement.
   */
  async summary(organizationId: string, freshAfter: Date): Promise<{ stale: boolean; rateLimitedUntil: Date | null }> {
    const rows = await this.prisma.$queryRaw<{ stale: boolean; rateLimitedUntil: Date | null }[]>(Prisma.sql`
      SELECT EXISTS (
          SELECT 1 FROM "CodeSource" cs JOIN "Integration" i ON i."id" = cs."integrationId" AND i."organizationId" = cs."organizationId"
          WHERE cs."organizationId" = ${organizationId} AND i."status" = 'ACTIVE' AND cs."provider"::text IN ('GITHUB', 'GITHUB_ENTERPRISE')
            AND NOT EXISTS (SELECT 1 FROM "UsageImport" u WHERE u."codeSourceId" = cs."id" AND u."status" = 'SUCCEEDED' AND u."finishedAt" >= ${freshAfter.toISOString()}::timestamp(3))
        ) AS "stale",
        (SELECT max(u."rateLimitedUntil") FROM "UsageImport" u WHERE u."organizationId" = ${organizationId} AND u."status" IN ('QUEUED', 'RUNNING')) AS "rateLimitedUntil"`);
    return rows[0];
  }

  importsWhere(organizationId: string): Prisma.UsageImportWhereInput {
    return { organizationId };
  }

  /**
   * Usage per code source, workflow and UTC day (of the run's creation), newest day first, then
   * by code source and workflow: runs from the runs table, jobs and billable minutes per runner OS
   * from the jobs table, aggregated in Postgres, with the number of groups in the same statement.
   */
  usageSource(organizationId: string, filter: UsageFilter): ListSource<UsageGroupRow> {
    const where = (alias: string) => {
      const column = (name: string) => Prisma.raw(`${alias}."${name}"`);
      const parts = [Prisma.sql`${column('organizationId')} = ${organizationId}`];
      if (filter.codeSourceId) parts.push(Prisma.sql`${column('codeSourceId')} = ${filter.codeSourceId}`);
      if (filter.from) parts.push(Prisma.sql`${column('runCreatedAt')} >= ${filter.from}::date`);
      if (filter.to) parts.push(Prisma.sql`${column('runCreatedAt')} < (${filter.to}::date + 1)`);
      return Prisma.join(parts, ' AND ');
    };
    const prisma = this.prisma;
    return {
      async fetch(_after, take, _orderBy, position) {
        const [day, codeSourceId, workflowName] = (position ?? []) as [string?, string?, string?];
        const after =
          day !== undefined
            ? Prisma.sql`WHERE g."day" < ${day}::date OR (g."day" = ${day}::date AND (g."codeSourceId", g."workflowName") > (${codeSourceId}, ${workflowName}))`
            : Prisma.empty;
        const rows = await prisma.$queryRaw<(UsageGroupRow & { total: number })[]>(Prisma.sql`
          WITH runs AS (
            SELECT r."codeSourceId", r."workflowName", r."runCreatedAt"::date AS "day", count(*)::int AS "runs"
            FROM "CiUsageRecord" r WHERE ${where('r')} GROUP BY 1, 2, 3
          ), jobs AS (
            SELECT j."codeSourceId", j."workflowName", j."runCreatedAt"::date AS "day", j."runnerOs"::text AS "runnerOs", count(*)::int AS "jobs", sum(j."billableMinutes")::int AS "billableMinutes"
            FROM "CiJobUsage" j WHERE ${where('j')} GROUP BY 1, 2, 3, 4
          ), groups AS (
            SELECT "codeSourceId", "workflowName", "day" FROM runs UNION SELECT "codeSourceId", "workflowName", "day" FROM jobs
          )
          SELECT g."codeSourceId", g."workflowName", to_char(g."day", 'YYYY-MM-DD') AS "day", coalesce(r."runs", 0) AS "runs",
            coalesce((SELECT json_agg(json_build_object('runnerOs', j."runnerOs", 'jobs', j."jobs", 'billableMinutes', j."billableMinutes") ORDER BY j."runnerOs")
                      FROM jobs j WHERE j."codeSourceId" = g."codeSourceId" AND j."workflowName" = g."workflowName" AND j."day" = g."day"), '[]'::json) AS "byRunnerOs",
            (SELECT count(*)::int FROM groups) AS "total"
          FROM groups g LEFT JOIN runs r ON r."codeSourceId" = g."codeSourceId" AND r."workflowName" = g."workflowName" AND r."day" = g."day"
          ${after}
          ORDER BY g."day" DESC, g."codeSourceId", g."workflowName"
          LIMIT ${take}`);
        const totalCount = rows[0]?.total ?? (day === undefined ? 0 : await countGroups());
        return { rows: rows.map(({ total: _total, ...row }) => row), totalCount };
      },
    };
    // A page past the last group has no row to carry the total: count on its own then.
    async function countGroups(): Promise<number> {
      const rows = await prisma.$queryRaw<{ n: number }[]>(Prisma.sql`
        SELECT count(*)::int AS n FROM (
          SELECT r."codeSourceId", r."workflowName", r."runCreatedAt"::date FROM "CiUsageRecord" r WHERE ${where('r')}
          UNION SELECT j."codeSourceId", j."workflowName", j."runCreatedAt"::date FROM "CiJobUsage" j WHERE ${where('j')}) AS g`);
      return rows[0]?.n ?? 0;
    }
  }

  // ---- the worker's side -------------------------------------------------------------------

  /**
   * Marks the import RUNNING (creating its row if the API process has not yet, or never will),
   * fixing its incremental lower bound at its first start. Null when the code source is gone.
   */
  async begin(
    importId: string,
    organizationId: string,
    codeSourceId: string,
  ): Promise<{ row: UsageImport; source: CodeSource; integration: Integration | null } | null> {
    const source = await this.prisma.codeSource.findFirst({ where: { id: codeSourceId, organizationId } });
    if (!source) return null;
    const integration = source.integrationId ? await this.prisma.integration.findFirst({ where: { id: source.integrationId, organizationId } }) : null;
    await this.prisma.usageImport.createMany({ data: [{ id: importId, organizationId, codeSourceId }], skipDuplicates: true });
    let row = await this.prisma.usageImport.findFirstOrThrow({ where: { id: importId, organizationId } });
    if (!row.startedAt) {
      const previous = await this.prisma.usageImport.findFirst({
        where: { organizationId, codeSourceId, status: 'SUCCEEDED' },
        orderBy: { startedAt: 'desc' },
        select: { startedAt: true },
      });
      row = await this.prisma.usageImport.update({
        where: { id: importId },
        data: { status: 'RUNNING', startedAt: new Date(), since: incrementalSince(previous?.startedAt) },
      });
    } else if (row.status !== 'RUNNING') {
      row = await this.prisma.usageImport.update({ where: { id: importId }, data: { status: 'RUNNING' } });
    }
    return { row, source, integration };
  }

  /**
   * Starts a page of runs: upserts them keyed by the provider's ids and marks each as walked by
   * this import from its first page of jobs, unless this import was already walking it (a resumed
   * import goes on where it stopped). One transaction, with the time and bytes spent so far. The
   * runs whose jobs are still to fetch, with the page to start from.
   */
  async beginPage(input: {
    importId: string;
    organizationId: string;
    codeSourceId: string;
    runs: WorkflowRun[];
    spent: Spent;
  }): Promise<{ id: string; nextJobsPage: number }[]> {
    const { importId, organizationId, codeSourceId } = input;
    const runs = [...new Map(input.runs.map((run) => [run.id, run])).values()];
    const upsert =
      runs.length === 0
        ? undefined
        : this.prisma.$queryRaw<{ id: string; nextJobsPage: number | null }[]>`
        INSERT INTO "CiUsageRecord" ("organizationId", "codeSourceId", "externalRunId", "workflowId", "workflowName", "event", "status", "conclusion", "runAttempt", "runCreatedAt", "runStartedAt", "runUpdatedAt", "jobsImportId", "jobsNextPage")
        SELECT ${organizationId}, ${codeSourceId}, t.*, ${importId}, 1 FROM unnest(
          ${runs.map((r) => r.id)}::text[], ${runs.map((r) => r.workflowId)}::text[], ${runs.map((r) => r.workflowName)}::text[], ${runs.map((r) => r.event)}::text[],
          ${runs.map((r) => r.status)}::text[], ${runs.map((r) => r.conclusion)}::text[], ${runs.map((r) => r.runAttempt)}::int[],
          ${runs.map((r) => r.createdAt)}::timestamp(3)[], ${runs.map((r) => r.runStartedAt)}::timestamp(3)[], ${runs.map((r) => r.updatedAt)}::timestamp(3)[]) AS t
        ON CONFLICT ("codeSourceId", "externalRunId") DO UPDATE SET
          "workflowId" = EXCLUDED."workflowId", "workflowName" = EXCLUDED."workflowName", "event" = EXCLUDED."event", "status" = EXCLUDED."status",
          "conclusion" = EXCLUDED."conclusion", "runAttempt" = EXCLUDED."runAttempt", "runCreatedAt" = EXCLUDED."runCreatedAt",
          "runStartedAt" = EXCLUDED."runStartedAt", "runUpdatedAt" = EXCLUDED."runUpdatedAt", "importedAt" = CURRENT_TIMESTAMP,
          "jobsNextPage" = CASE WHEN "CiUsageRecord"."jobsImportId" = EXCLUDED."jobsImportId" THEN "CiUsageRecord"."jobsNextPage" ELSE 1 END,
          "jobsImportId" = EXCLUDED."jobsImportId"
        RETURNING "externalRunId" AS "id", "jobsNextPage" AS "nextJobsPage"`;
    const spent = this.spend(importId, organizationId, input.spent);
    if (!upsert) {
      await spent;
      return [];
    }
    const [pending] = await this.prisma.$transaction([upsert, spent]);
    return pending.filter((row): row is { id: string; nextJobsPage: number } => row.nextJobsPage !== null);
  }

  /**
   * Writes one page of a run's jobs (upserts keyed by the provider's ids) and moves the run's
   * checkpoint past it (to null after its last page), with the count and the time and bytes
   * spent, in one statement: a worker killed before it commits fetches the page again, one killed
   * after goes on at the next; nothing is counted twice. Nothing is written when the run's
   * checkpoint is not at `page` (another worker got there first).
   */
  async commitJobsPage(input: {
    importId: string;
    organizationId: string;
    codeSourceId: string;
    run: Pick<WorkflowRun, 'id' | 'workflowName' | 'createdAt'>;
    page: number;
    last: boolean;
    jobs: WorkflowJob[];
    spent: Spent;
  }): Promise<void> {
    const { importId, organizationId, codeSourceId, run, page } = input;
    const jobs = [...new Map(input.jobs.filter((job) => job.runId === run.id).map((job) => [job.id, job])).values()];
    const minutes = jobs.map((job) => jobMinutes(job));
    await this.prisma.$executeRaw`
      WITH progress AS (
        UPDATE "CiUsageRecord" SET "jobsNextPage" = ${input.last ? null : page + 1}::int
        WHERE "codeSourceId" = ${codeSourceId} AND "externalRunId" = ${run.id} AND "jobsImportId" = ${importId} AND "jobsNextPage" = ${page}
        RETURNING 1
      ), written AS (
        INSERT INTO "CiJobUsage" ("organizationId", "codeSourceId", "externalJobId", "externalRunId", "workflowName", "runCreatedAt", "name", "runnerOs", "conclusion", "startedAt", "completedAt", "durationSeconds", "billableMinutes")
        SELECT ${organizationId}, ${codeSourceId}, t.id, ${run.id}, ${run.workflowName}, ${run.createdAt}::timestamp(3), t.name, t.os::"CiRunnerOs", t.conclusion, t.started, t.completed, t.duration, t.billable FROM unnest(
          ${jobs.map((j) => j.id)}::text[], ${jobs.map((j) => j.name)}::text[], ${jobs.map((j) => runnerOs(j))}::text[],
          ${jobs.map((j) => j.conclusion)}::text[], ${jobs.map((j) => j.startedAt)}::timestamp(3)[], ${jobs.map((j) => j.completedAt)}::timestamp(3)[],
          ${minutes.map((m) => m.durationSeconds)}::int[], ${minutes.map((m) => m.billableMinutes)}::int[]) AS t(id, name, os, conclusion, started, completed, duration, billable)
        WHERE EXISTS (SELECT 1 FROM progress)
        ON CONFLICT ("codeSourceId", "externalJobId") DO UPDATE SET
          "externalRunId" = EXCLUDED."externalRunId", "workflowName" = EXCLUDED."workflowName", "runCreatedAt" = EXCLUDED."runCreatedAt", "name" = EXCLUDED."name",
          "runnerOs" = EXCLUDED."runnerOs", "conclusion" = EXCLUDED."conclusion", "startedAt" = EXCLUDED."startedAt", "completedAt" = EXCLUDED."completedAt",
          "durationSeconds" = EXCLUDED."durationSeconds", "billableMinutes" = EXCLUDED."billableMinutes"
        RETURNING 1
      )
      UPDATE "UsageImport" SET
        "jobsImported" = "jobsImported" + (SELECT count(*)::int FROM written),
        "runningMs" = "runningMs" + ${Math.round(input.spent.ms)}, "bytesRead" = "bytesRead" + ${input.spent.bytes}, "updatedAt" = CURRENT_TIMESTAMP
      WHERE "id" = ${importId} AND "organizationId" = ${organizationId}`;
  }

  /**
   * Ends a page of runs whose jobs are all written: writes the jobs of the runs that had a single
   * page of them (held back so that a page of ordinary runs is one transaction, not one per run;
   * each run's checkpoint then goes to null with them) and moves the import's checkpoint past the
   * page with the counts, in one transaction. A worker killed before it commits starts the page
   * again, finding each run's jobs done or where they stopped.
   */
  async commitPage(input: {
    importId: string;
    organizationId: string;
    codeSourceId: string;
    page: number;
    runs: number;
    /** Runs with a single page of jobs, and that page. */
    held: { run: Pick<WorkflowRun, 'id' | 'workflowName' | 'createdAt'>; jobs: WorkflowJob[] }[];
    spent: Spent;
  }): Promise<UsageImport> {
    const { importId, organizationId, codeSourceId } = input;
    const jobs = [
      ...new Map(input.held.flatMap(({ run, jobs }) => jobs.filter((job) => job.runId === run.id).map((job) => [job.id, { job, run }] as const))).values(),
    ];
    const runIds = input.held.map(({ run }) => run.id);
    const statements: Prisma.PrismaPromise<unknown>[] = [];
    if (runIds.length > 0)
      statements.push(this.prisma.$executeRaw`
        UPDATE "CiUsageRecord" SET "jobsNextPage" = NULL
        WHERE "codeSourceId" = ${codeSourceId} AND "externalRunId" = ANY(${runIds}::text[]) AND "jobsImportId" = ${importId}`);
    if (jobs.length > 0) {
      const minutes = jobs.map(({ job }) => jobMinutes(job));
      statements.push(this.prisma.$executeRaw`
        INSERT INTO "CiJobUsage" ("organizationId", "codeSourceId", "externalJobId", "externalRunId", "workflowName", "runCreatedAt", "name", "runnerOs", "conclusion", "startedAt", "completedAt", "durationSeconds", "billableMinutes")
        SELECT ${organizationId}, ${codeSourceId}, t.id, t.run, t.workflow, t.created, t.name, t.os::"CiRunnerOs", t.conclusion, t.started, t.completed, t.duration, t.billable FROM unnest(
          ${jobs.map(({ job }) => job.id)}::text[], ${jobs.map(({ run }) => run.id)}::text[], ${jobs.map(({ run }) => run.workflowName)}::text[],
          ${jobs.map(({ run }) => run.createdAt)}::timestamp(3)[], ${jobs.map(({ job }) => job.name)}::text[], ${jobs.map(({ job }) => runnerOs(job))}::text[],
          ${jobs.map(({ job }) => job.conclusion)}::text[], ${jobs.map(({ job }) => job.startedAt)}::timestamp(3)[], ${jobs.map(({ job }) => job.completedAt)}::timestamp(3)[],
          ${minutes.map((m) => m.durationSeconds)}::int[], ${minutes.map((m) => m.billableMinutes)}::int[]) AS t(id, run, workflow, created, name, os, conclusion, started, completed, duration, billable)
        ON CONFLICT ("codeSourceId", "externalJobId") DO UPDATE SET
          "externalRunId" = EXCLUDED."externalRunId", "workflowName" = EXCLUDED."workflowName", "runCreatedAt" = EXCLUDED."runCreatedAt", "name" = EXCLUDED."name",
          "runnerOs" = EXCLUDED."runnerOs", "conclusion" = EXCLUDED."conclusion", "startedAt" = EXCLUDED."startedAt", "completedAt" = EXCLUDED."completedAt",
          "durationSeconds" = EXCLUDED."durationSeconds", "billableMinutes" = EXCLUDED."billableMinutes"`);
    }
    const checkpoint = this.prisma.usageImport.update({
      where: { id: importId, organizationId },
      data: {
        nextPage: input.page + 1,
        pagesDone: { increment: 1 },
        runsImported: { increment: input.runs },
        jobsImported: { increment: jobs.length },
        rateLimitedUntil: null,
        runningMs: { increment: Math.round(input.spent.ms) },
        bytesRead: { increment: input.spent.bytes },
      },
    });
    const results = await this.prisma.$transaction([...statements, checkpoint]);
    return results[results.length - 1] as UsageImport;
  }

  private spend(importId: string, organizationId: string, spent: Spent) {
    return this.prisma.usageImport.update({
      where: { id: importId, organizationId },
      data: { runningMs: { increment: Math.round(spent.ms) }, bytesRead: { increment: spent.bytes } },
    });
  }

  async rateLimited(importId: string, organizationId: string, until: Date, reason: string, spent: Spent = NOTHING): Promise<void> {
    await this.prisma.usageImport.updateMany({
      where: { id: importId, organizationId },
      data: {
        status: 'QUEUED',
        rateLimitedUntil: until,
        lastError: `rate limited by the git provider until ${until.toISOString()}: ${reason}`,
        ...increments(spent),
      },
    });
  }

  async retrying(importId: string, organizationId: string, error: string, spent: Spent = NOTHING): Promise<void> {
    await this.prisma.usageImport.updateMany({ where: { id: importId, organizationId }, data: { status: 'QUEUED', lastError: error, ...increments(spent) } });
  }

  /** Ends the import; `onlyIfRunning` leaves one another worker already ended alone. */
  async finish(
    importId: string,
    organizationId: string,
    outcome: { status: 'SUCCEEDED' } | { status: 'FAILED'; error: string },
    spent: Spent = NOTHING,
    onlyIfRunning = false,
  ): Promise<void> {
    await this.prisma.usageImport.updateMany({
      where: { id: importId, organizationId, ...(onlyIfRunning ? { status: { in: ['QUEUED', 'RUNNING'] } } : {}) },
      data: {
        status: outcome.status,
        finishedAt: new Date(),
        rateLimitedUntil: null,
        ...(outcome.status === 'FAILED' ? { lastError: outcome.error } : {}),
        ...increments(spent),
      },
    });
  }
}
