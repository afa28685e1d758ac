import type { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import request from 'supertest';
import { VENDORS, vendorShapeProblems } from '@/modules/execution-environments/vendors';
import { createTestApp } from '../support/app';
import { eventually } from '../support/eventually';
import { createExecutionEnvironment, createProject, createTenant, ENVIRONMENT_SHAPES, type TestTenant } from '../support/factories';

const { AWS: AWS_ENV, GCP: GCP_ENV } = ENVIRONMENT_SHAPES;

describe('Pipelines, versions, runs and sandbox plans', () => {
  let app: NestExpressApplication;
  let tenant: TestTenant;
  let other: TestTenant;
  let projectId: string;
  let aws: string;
  let gcp: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp();
    [tenant, other] = await Promise.all([createTenant(app, 'pipelines'), createTenant(app, 'pipelines-other')]);
    [{ id: projectId }, { id: aws }, { id: gcp }] = await Promise.all([
      createProject(app, tenant, { name: 'Checkout' }),
      createExecutionEnvironment(app, tenant, { name: 'aws', ...AWS_ENV }),
      createExecutionEnvironment(app, tenant, { name: 'gcp', ...GCP_ENV }),
    ]);
  });

  afterAll(async () => {
    await app.close();
  });

  async function newPipeline(name: string): Promise<string> {
    return (await http().post('/pipelines').set(tenant.auth).send({ data: { projectId, name } }).expect(201)).body.data.id;
  }
  const step = (name: string, executionEnvironmentId: string, dependsOn: string[] = [], extra: object = {}) => ({
    name,
    executionEnvironmentId,
    cpu: 2,
    memoryGiB: 4,
    diskGiB: 10,
    dependsOn,
    ...extra,
  });

  it('creates, reads, lists by project, updates and deletes a pipeline with exactly the spec fields', async () => {
    const created = await http()
      .post('/pipelines')
      .set(tenant.auth)
      .send({ data: { projectId, name: 'Deploy checkout', givenId: 'deploy', description: 'prod' } })
      .expect(201);
    const id = created.body.data.id;
    expect(Object.keys(created.body.data).sort()).toEqual(['createdAt', 'description', 'givenId', 'id', 'name', 'organizationId', 'projectId', 'updatedAt']);
    await http()
      .post('/pipelines')
      .set(tenant.auth)
      .send({ data: { projectId, name: 'Again', givenId: 'deploy' } })
      .expect(409);
    const foreignProject = await http()
      .post('/pipelines')
      .set(other.auth)
      .send({ data: { projectId, name: 'x' } })
      .expect(422);
    expect(foreignProject.body.code).toBe('dpa:Pipeline:PROJECT_NOT_FOUND');
    const listed = await http().get('/pipelines').query({ projectId }).set(tenant.auth).expect(200);
    expect(listed.body.data.map((p: { id: string }) => p.id)).toContain(id);
    expect(listed.body.meta.totalCount).toBeGreaterThanOrEqual(1);
    const patched = await http()
      .patch(`/pipelines/${id}`)
      .set(tenant.auth)
      .send({ data: { name: 'Deploy' } })
      .expect(200);
    expect(patched.body.data.name).toBe('Deploy');
    await http().patch(`/pipelines/${id}`).set(tenant.auth).send({ data: { projectId } }).expect(400);
    await http().delete(`/pipelines/${id}`).set(tenant.auth).expect(204);
    await http().get(`/pipelines/${id}`).set(tenant.auth).expect(404);
  });

  it('publishes versions and plans them: a hand-computed case with the real catalogues', async () => {
    const pipelineId = await newPipeline('Plan me');
    const steps = [
      step('build', aws, [], { cpu: 4, memoryGiB: 8, diskGiB: 30 }),
      step('test-a', aws, ['build'], { parallelism: 30 }),
      step('test-b', aws, ['build']),
      step('lint', aws, ['build'], { cpu: 1, memoryGiB: 2, diskGiB: 5 }),
      step('package', gcp, ['test-a', 'test-b', 'lint']),
      step('deploy', aws, ['package']),
    ];
    const published = await http().post(`/pipelines/${pipelineId}/versions`).set(tenant.auth).send({ data: { steps } }).expect(201);
    expect(published.body.data).toMatchObject({ pipelineId, version: 1 });
    expect(published.body.data.steps[0]).toEqual({ ...steps[0], parallelism: 1 });
    const versionId = published.body.data.id;
    await http().get(`/pipeline-versions/${versionId}`).set(tenant.auth).expect(200);

    const plan = await http().get(`/pipeline-versions/${versionId}/sandbox-plan`).set(tenant.auth).expect(200);
    // AWS pool: test-a x30, test-b and lint overlap (32); build and deploy are ordered against them
    // (deploy through package, in GCP). Slot 4.25 vCPU / 8.25 GiB / 32 GiB. c5d.metal (96/192/3600
    // minus 2/8/100): min(22, 22, 109) = 22 slots, 2 hosts = 9.216 USD/h; the next cheapest is i3.metal
    // (16 slots, 2 hosts = 9.984), z1d.metal needs 4 hosts (17.856).
    // GCP pool: package alone; slot 2.25/4.25/12; c3-standard-4-lssd has 2 vCPU after the reservation (0 slots),
    // c3-standard-8-lssd: min(2, 5, 54) = 2 slots, 1 host.
    const [first, second] = [aws, gcp].sort();
    const pools = {
      [aws]: {
        executionEnvironmentId: aws,
        instanceType: 'c5d.metal',
        slotsPerHost: 22,
        hostsNeeded: 2,
        maxConcurrentSandboxes: 32,
        steps: ['build', 'deploy', 'lint', 'test-a', 'test-b'],
      },
      [gcp]: {
        executionEnvironmentId: gcp,
        instanceType: 'c3-standard-8-lssd',
        slotsPerHost: 2,
        hostsNeeded: 1,
        maxConcurrentSandboxes: 1,
        steps: ['package'],
      },
    };
    expect(plan.body.data.pools.map((p: { steps: { name: string }[] }) => ({ ...p, steps: p.steps.map((s) => s.name) }))).toEqual([
      pools[first],
      pools[second],
    ]);
    expect(Object.keys(plan.body.data.pools[0]).sort()).toEqual([
      'executionEnvironmentId',
      'hostsNeeded',
      'instanceType',
      'maxConcurrentSandboxes',
      'slotsPerHost',
      'steps',
    ]);
    expect(plan.body.data.pools.find((p: { executionEnvironmentId: string }) => p.executionEnvironmentId === aws).steps[0]).toEqual({
      name: 'build',
      cpu: 4,
      memoryGiB: 8,
      diskGiB: 30,
    });

    const second2 = await http()
      .post(`/pipelines/${pipelineId}/versions`)
      .set(tenant.auth)
      .send({ data: { steps: [step('only', aws)] } })
      .expect(201);
    expect(second2.body.data.version).toBe(2);
    const onlyAws = await http().get(`/pipeline-versions/${second2.body.data.id}/sandbox-plan`).set(tenant.auth).expect(200);
    expect(onlyAws.body.data.pools.map((p: { executionEnvironmentId: string }) => p.executionEnvironmentId)).toEqual([aws]);
    const versions = await http().get(`/pipelines/${pipelineId}/versions`).query({ limit: 1 }).set(tenant.auth).expect(200);
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([2]);
    const next = await http().get(`/pipelines/${pipelineId}/versions`).query({ limit: 1, cursor: versions.body.meta.nextCursor }).set(tenant.auth).expect(200);
    expect(next.body.data.map((v: { version: number }) => v.version)).toEqual([1]);

    // The environment is in use: deleting it is a 409 listing the versions.
    const refused = await http().delete(`/execution-environments/${gcp}`).set(tenant.auth).expect(409);
    expect(refused.body.code).toBe('dpa:ExecutionEnvironment:IN_USE');
    expect(refused.body.details[0].items.join(' ')).toContain(versionId);
  });

  it('refuses invalid versions with 422s that name the steps', async () => {
    const pipelineId = await newPipeline('Invalid');
    const post = (steps: object[]) => http().post(`/pipelines/${pipelineId}/versions`).set(tenant.auth).send({ data: { steps } });
    const cycle = await post([step('root', aws), step('a', aws, ['root', 'c']), step('b', aws, ['a']), step('c', aws, ['b'])]).expect(422);
    expect(cycle.body.code).toBe('dpa:PipelineVersion:DEPENDENCY_CYCLE');
    const items: string[] = cycle.body.details[0].items;
    expect(items).toHaveLength(3);
    const at = ['a', 'b', 'c'].indexOf(items[0]);
    expect(items).toEqual([...['a', 'b', 'c'].slice(at), ...['a', 'b', 'c'].slice(0, at)]);
    const unknown = await post([step('a', aws, ['ghost'])]).expect(422);
    expect(unknown.body.code).toBe('dpa:PipelineVersion:UNKNOWN_DEPENDENCY');
    expect(unknown.body.message).toContain('ghost');
    await post([step('a', aws), step('a', aws)]).expect(422);
    const foreignEnv = (await createExecutionEnvironment(app, other, { name: 'theirs' })).id;
    const foreign = await post([step('ok', aws), step('sneaky', foreignEnv)]).expect(422);
    expect(foreign.body.code).toBe('dpa:PipelineVersion:UNKNOWN_EXECUTION_ENVIRONMENT');
    expect(foreign.body.message).toContain('sneaky');
    await post([step('a', aws, [], { cpu: 0 })]).expect(400);
    await post([step('a', aws, [], { cpu: 'x' })]).expect(400);
    await post([step('a', aws, [], { parallelism: 1.5 })]).expect(400);
    await post([]).expect(400);
    const none = await http().get(`/pipelines/${pipelineId}/versions`).set(tenant.auth).expect(200);
    expect(none.body.data).toEqual([]);

    // A step larger than every host: the plan is a 422 naming the step and the largest type.
    const big = await post([step('small', aws), step('huge', aws, [], { memoryGiB: 2000 })]).expect(201);
    const plan = await http().get(`/pipeline-versions/${big.body.data.id}/sandbox-plan`).set(tenant.auth).expect(422);
    expect(plan.body.code).toBe('dpa:SandboxPlan:STEP_FITS_NO_INSTANCE_TYPE');
    expect(plan.body.metadata).toMatchObject({ steps: ['huge'], largestType: 'i4i.metal' });
  });

  it('numbers concurrent publishes without gaps or duplicates', async () => {
    const pipelineId = await newPipeline('Concurrent');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        http()
          .post(`/pipelines/${pipelineId}/versions`)
          .set(tenant.auth)
          .send({ data: { steps: [step(`s${i}`, aws)] } }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(results.map((r) => r.body.data.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('records runs, moves them through their lifecycle and keeps latestRun* on the newest run', async () => {
    const pipelineId = await newPipeline('Runs');
    const versionId = (
      await http()
        .post(`/pipelines/${pipelineId}/versions`)
        .set(tenant.auth)
        .send({ data: { steps: [step('a', aws)] } })
        .expect(201)
    ).body.data.id;
    const first = await http()
      .post(`/pipelines/${pipelineId}/runs`)
      .set(tenant.auth)
      .send({ data: { pipelineVersionId: versionId } })
      .expect(201);
    expect(first.body.data.status).toBe('QUEUED');
    let pipeline = (await http().get(`/pipelines/${pipelineId}`).set(tenant.auth).expect(200)).body.data;
    expect(pipeline).toMatchObject({ latestRunId: first.body.data.id, latestRunStatus: 'QUEUED' });
    const move = (id: string, status: string) => http().patch(`/pipeline-runs/${id}`).set(tenant.auth).send({ data: { status } });
    await move(first.body.data.id, 'RUNNING').expect(200);
    await move(first.body.data.id, 'SUCCEEDED').expect(200);
    const refused = await move(first.body.data.id, 'RUNNING').expect(422);
    expect(refused.body.code).toBe('dpa:PipelineRun:INVALID_TRANSITION');
    expect(refused.body.message).toContain('SUCCEEDED');
    expect(refused.body.message).toContain('RUNNING');
    await move(first.body.data.id, 'CANCELLED').expect(400);
    pipeline = (await http().get(`/pipelines/${pipelineId}`).set(tenant.auth).expect(200)).body.data;
    expect(pipeline.latestRunStatus).toBe('SUCCEEDED');

    const otherPipeline = await newPipeline('Elsewhere');
    await http()
      .post(`/pipelines/${otherPipeline}/runs`)
      .set(tenant.auth)
      .send({ data: { pipelineVersionId: versionId } })
      .expect(422);

    // Concurrent runs and moves: the pipeline shows the newest run with its real status.
    const runs = await Promise.all(
      Array.from({ length: 6 }, () =>
        http()
          .post(`/pipelines/${pipelineId}/runs`)
          .set(tenant.auth)
          .send({ data: { pipelineVersionId: versionId } })
          .expect(201),
      ),
    );
    const ids = runs.map((r) => r.body.data.id);
    await Promise.all(ids.flatMap((id) => [move(id, 'RUNNING'), move(id, 'CANCELED')]));
    pipeline = (await http().get(`/pipelines/${pipelineId}`).set(tenant.auth).expect(200)).body.data;
    expect(ids).toContain(pipeline.latestRunId);
    const newest = await http().get(`/pipeline-runs/${pipeline.latestRunId}`).set(tenant.auth).expect(200);
    expect(pipeline.latestRunStatus).toBe(newest.body.data.status);
    const created = await Promise.all(ids.map((id) => http().get(`/pipeline-runs/${id}`).set(tenant.auth).expect(200)));
    const byTime = created.map((r) => r.body.data).sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1));
    expect(pipeline.latestRunId).toBe(byTime[0].id);
  });

  describe('execution environments by vendor', () => {
    it("validates each vendor's identifier shapes with a 400 naming the field", async () => {
      const bad = await http()
        .post('/execution-environments')
        .set(tenant.auth)
        .send({ data: { name: 'bad', ...AWS_ENV, vpcId: 'vpc-123', cloudAccountId: '12345' } })
        .expect(400);
      expect(bad.body.code).toBe('dpa:ExecutionEnvironment:INVALID_IDENTIFIER');
      expect(bad.body.details[0].items.map((i: string) => i.split(':')[0])).toEqual(['data.vpcId', 'data.cloudAccountId']);
      const region = await http()
        .post('/execution-environments')
        .set(tenant.auth)
        .send({ data: { name: 'bad', ...AWS_ENV, region: 'europe-west1' } })
        .expect(400);
      expect(region.body.details[0].items[0]).toMatch(/^data\.region:/);
      await http()
        .post('/execution-environments')
        .set(tenant.auth)
        .send({ data: { name: 'bad', ...GCP_ENV, cloudAccountId: '123456789012' } })
        .expect(400);
      await http()
        .post('/execution-environments')
        .set(tenant.auth)
        .send({ data: { name: 'bad', ...AWS_ENV, type: 'CLOUD_VPC' } })
        .expect(400);
    });

    it('updates with PATCH (a new type re-checks every field) and deletes an unused environment', async () => {
      const id = (
        await http()
          .post('/execution-environments')
          .set(tenant.auth)
          .send({ data: { name: 'patch me', ...AWS_ENV } })
          .expect(201)
      ).body.data.id;
      const renamed = await http()
        .patch(`/execution-environments/${id}`)
        .set(tenant.auth)
        .send({ data: { name: 'patched', region: 'eu-west-1' } })
        .expect(200);
      expect(renamed.body.data).toMatchObject({ name: 'patched', region: 'eu-west-1', type: 'AWS' });
      const bad = await http()
        .patch(`/execution-environments/${id}`)
        .set(tenant.auth)
        .send({ data: { subnetId: 'subnet-xyz' } })
        .expect(400);
      expect(bad.body.details[0].items[0]).toMatch(/^data\.subnetId:/);
      const switched = await http()
        .patch(`/execution-environments/${id}`)
        .set(tenant.auth)
        .send({ data: { type: 'GCP' } })
        .expect(400);
      // vpc-0a1b2c3d etc. happen to be valid GCP names; the AWS region and 12-digit account are not.
      expect(switched.body.metadata.fields).toEqual(['region', 'cloudAccountId']);
      await http()
        .patch(`/execution-environments/${id}`)
        .set(tenant.auth)
        .send({ data: { ...GCP_ENV } })
        .expect(200);
      await http().delete(`/execution-environments/${id}`).set(tenant.auth).expect(204);
      await http().get(`/execution-environments/${id}`).set(tenant.auth).expect(404);
    });

    it('a PATCH checks its fields against the type the row has when it writes, not one a concurrent change replaced', async () => {
      const id = (
        await http()
          .post('/execution-environments')
          .set(tenant.auth)
          .send({ data: { name: 'raced', ...AWS_ENV } })
          .expect(201)
      ).body.data.id;
      const holder = new Client({ connectionString: process.env.DATABASE_URL });
      // The wait is watched from a connection of its own: inside the holder's transaction
      // pg_stat_activity is a snapshot taken at its first read, which never shows a later wait.
      const watcher = new Client({ connectionString: process.env.DATABASE_URL });
      await holder.connect();
      await watcher.connect();
      try {
        // Another writer holds the row while it switches the environment to GCP.
        await holder.query('BEGIN');
        await holder.query('SELECT "id" FROM "ExecutionEnvironment" WHERE "id" = $1 FOR UPDATE', [id]);
        const patch = http()
          .patch(`/execution-environments/${id}`)
          .set(tenant.auth)
          .send({ data: { region: 'eu-west-1' } })
          .then((r) => r);
        await eventually(
          'the PATCH waiting for the row',
          async () => {
            const { rows } = await watcher.query(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database() AND query ILIKE '%ExecutionEnvironment%'`,
            );
            return rows[0].n > 0;
          },
          { timeoutMs: 5_000, everyMs: 20 },
        );
        await holder.query(
          `UPDATE "ExecutionEnvironment" SET "type" = 'GCP', "region" = $2, "vpcId" = $3, "subnetId" = $4, "securityGroupId" = $5, "cloudAccountId" = $6 WHERE "id" = $1`,
          [id, GCP_ENV.region, GCP_ENV.vpcId, GCP_ENV.subnetId, GCP_ENV.securityGroupId, GCP_ENV.cloudAccountId],
        );
        await holder.query('COMMIT');
        const response = await patch;
        const row = (await http().get(`/execution-environments/${id}`).set(tenant.auth).expect(200)).body.data;
        expect(vendorShapeProblems(VENDORS[row.type as 'AWS' | 'GCP'], row)).toEqual([]);
        expect(response.status).toBe(400);
        expect(response.body.details[0].items[0]).toMatch(/^data\.region: must be a region of GCP/);
      } finally {
        await Promise.all([holder.end(), watcher.end()]);
      }
    });
  });
});
