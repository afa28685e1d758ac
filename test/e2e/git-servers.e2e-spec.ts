import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { startDnsServer } from '../support/dns-server';
import { createTenant, type TestTenant } from '../support/factories';
import { createGitTestApp, GitProviderEmulator } from '../support/git';

describe('Self-hosted git servers: SSRF refusals (DNS on loopback) and self-hosted providers', () => {
  let emulator: GitProviderEmulator;
  let dns: Awaited<ReturnType<typeof startDnsServer>>;
  let strict: NestExpressApplication;
  let onPremises: NestExpressApplication;
  let tenant: TestTenant;
  let onPremisesTenant: TestTenant;

  beforeAll(async () => {
    emulator = await new GitProviderEmulator().start();
    dns = await startDnsServer({
      'loopback.test': { a: ['127.0.0.1'] },
      'metadata.test': { a: ['169.254.169.254'] },
      'private.test': { a: ['10.1.2.3'] },
      'cgnat.test': { a: ['100.64.1.1'] },
      'v6loopback.test': { aaaa: ['::1'] },
      'v6ula.test': { aaaa: ['fd00::1'] },
      'mixed.test': { a: ['93.184.216.34', '127.0.0.1'] },
      // DNS rebinding: a public answer for the check, loopback for the connection.
      'rebind.test': { a: (queries) => (queries === 0 ? ['93.184.216.34'] : ['127.0.0.1']) },
      'emulator.test': { a: ['127.0.0.1'] },
    });
    strict = await createGitTestApp(emulator, { allowHttp: true, allowPrivateHosts: false, dnsServers: [dns.server] });
    onPremises = await createGitTestApp(emulator, { allowHttp: true, allowPrivateHosts: true, dnsServers: [dns.server] });
    tenant = await createTenant(strict, 'ssrf');
    onPremisesTenant = await createTenant(onPremises, 'onprem');
  }, 60_000);

  afterAll(async () => {
    await strict?.close();
    await onPremises?.close();
    await dns?.close();
    await emulator?.stop();
  });

  const port = () => new URL(emulator.url).port;

  it('refuses every SSRF probe with a 422 that says why, and stores none', async () => {
    const probes = [
      'https://127.0.0.1',
      'https://127.1.2.3',
      'https://[::1]',
      'https://169.254.169.254',
      'https://169.254.169.254/latest/meta-data',
      'https://[fe80::1]',
      'https://10.0.0.1',
      'https://172.16.5.4',
      'https://192.168.0.1',
      'https://100.64.0.1',
      'https://[fc00::1]',
      'https://[fd12:3456::1]',
      'https://0.0.0.0',
      'https://[::]',
      'https://224.0.0.1',
      'https://[::ffff:127.0.0.1]',
      'https://[::ffff:169.254.169.254]',
      'https://2130706433',
      'https://0x7f.0.0.1',
      'https://017700000001',
      'https://loopback.test',
      'https://metadata.test',
      'https://private.test',
      'https://cgnat.test',
      'https://v6loopback.test',
      'https://v6ula.test',
      'https://mixed.test',
      `http://rebind.test:${port()}`,
      'https://user:secret@gitlab.example.com',
      'https://gitlab.example.com/?a=1',
      'https://gitlab.example.com/#frag',
      'ftp://gitlab.example.com',
      'https://unknown-name.test',
    ];
    const accepted: string[] = [];
    for (const hostUrl of probes) {
      const response = await request(strict.getHttpServer())
        .post('/git/self-hosted')
        .set(tenant.auth)
        .send({ data: { provider: 'GITLAB', hostUrl } });
      if (response.status !== 422) accepted.push(`${hostUrl} -> ${response.status} ${response.body.code}`);
      else expect(response.body.message.length).toBeGreaterThan(20);
    }
    process.stdout.write(`SSRF probes: ${probes.length} sent, ${accepted.length} accepted\n`);
    expect(accepted).toEqual([]);
    const list = await request(strict.getHttpServer()).get('/git/self-hosted').set(tenant.auth).expect(200);
    expect(list.body.meta.totalCount).toBe(0);
  });

  it('says why: the metadata address, a name resolving to loopback, and a rebinding name caught at connect time', async () => {
    const post = (hostUrl: string) =>
      request(strict.getHttpServer())
        .post('/git/self-hosted')
        .set(tenant.auth)
        .send({ data: { provider: 'GITLAB', hostUrl } })
        .expect(422);
    expect((await post('https://169.254.169.254')).body.message).toContain('link-local');
    expect((await post('https://loopback.test')).body.message).toContain('loopback.test resolves to 127.0.0.1 is a loopback address');
    dns.queries.delete('rebind.test');
    const rebind = await post(`http://rebind.test:${port()}`);
    expect(rebind.body.code).toBe('dpa:GitProvider:HOST_REFUSED');
    expect(rebind.body.message).toContain('loopback');
    // The check saw the public answer; the connection asked again and was refused.
    expect(dns.queries.get('rebind.test')).toBeGreaterThanOrEqual(2);
  });

  it('with private hosts allowed: registers servers, counts their accounts, and maps GitLab and GitHub Enterprise repositories', async () => {
    const http = () => request(onPremises.getHttpServer());
    const gitlab = await http()
      .post('/git/self-hosted')
      .set(onPremisesTenant.auth)
      .send({ data: { provider: 'GITLAB', hostUrl: `http://emulator.test:${port()}/` } })
      .expect(201);
    expect(gitlab.body.data).toMatchObject({ provider: 'GITLAB', hostUrl: `http://emulator.test:${port()}`, gitAccountsCount: 0 });
    await http()
      .post('/git/self-hosted')
      .set(onPremisesTenant.auth)
      .send({ data: { provider: 'GITLAB', hostUrl: `http://emulator.test:${port()}` } })
      .expect(409);
    const ghes = await http()
      .post('/git/self-hosted')
      .set(onPremisesTenant.auth)
      .send({ data: { provider: 'GITHUB_ENTERPRISE', hostUrl: `http://127.0.0.1:${port()}` } })
      .expect(201);
    // Link-local stays refused even here.
    await http()
      .post('/git/self-hosted')
      .set(onPremisesTenant.auth)
      .send({ data: { provider: 'GITLAB', hostUrl: 'http://169.254.169.254' } })
      .expect(422);

    const dev = emulator.addUser('gl-dev');
    emulator.addRepository('gl-dev', 'service', { description: 'On GitLab', private: true, collaborators: ['gl-dev', 'octocat'] });
    const integration = await http()
      .post('/integrations')
      .set(onPremisesTenant.auth)
      .send({ data: { provider: 'GITLAB', authMethod: 'API_TOKEN', name: 'GitLab', token: dev.token, gitServerId: gitlab.body.data.id } })
      .expect(201);
    expect(integration.body.data).toMatchObject({ status: 'ACTIVE', externalAccountName: 'gl-dev', gitServerId: gitlab.body.data.id });
    expect((await http().get(`/git/self-hosted/${gitlab.body.data.id}`).set(onPremisesTenant.auth).expect(200)).body.data.gitAccountsCount).toBe(1);
    await http().delete(`/git/self-hosted/${gitlab.body.data.id}`).set(onPremisesTenant.auth).expect(409);
    const source = await http()
      .post('/code-sources')
      .set(onPremisesTenant.auth)
      .send({ data: { integrationId: integration.body.data.id, repository: 'gl-dev/service' } })
      .expect(201);
    const repo = await http().get(`/code-source/${source.body.data.id}/repository`).set(onPremisesTenant.auth).expect(200);
    expect(repo.body.data).toMatchObject({
      name: 'service',
      nameWithOwner: 'gl-dev/service',
      owner: { login: 'gl-dev' },
      description: 'On GitLab',
      isPrivate: true,
      isInNamespace: true,
      collaborators: { totalCount: 2 },
      defaultBranch: { name: 'main' },
      defaultBranchRef: { name: 'main' },
    });

    const enterprise = await http()
      .post('/integrations')
      .set(onPremisesTenant.auth)
      .send({ data: { provider: 'GITHUB_ENTERPRISE', authMethod: 'API_TOKEN', name: 'GHES', token: dev.token, gitServerId: ghes.body.data.id } })
      .expect(201);
    const ghesSource = await http()
      .post('/code-sources')
      .set(onPremisesTenant.auth)
      .send({ data: { integrationId: enterprise.body.data.id, repository: 'octocat/hello-world' } });
    expect(ghesSource.status).toBe(404);
    emulator.addRepository('gl-dev', 'enterprise-app');
    const ok = await http()
      .post('/code-sources')
      .set(onPremisesTenant.auth)
      .send({ data: { integrationId: enterprise.body.data.id, repository: 'gl-dev/enterprise-app' } })
      .expect(201);
    const ghesRepo = await http().get(`/code-source/${ok.body.data.id}/repository`).set(onPremisesTenant.auth).expect(200);
    expect(ghesRepo.body.data).toMatchObject({ nameWithOwner: 'gl-dev/enterprise-app', isInNamespace: true, collaborators: { totalCount: 1 } });
    expect(emulator.requests.some((r) => r.path.startsWith('/api/v3/repos/gl-dev/enterprise-app'))).toBe(true);
  });
});
