import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { createTestApp } from '../support/app';

const ROOT = join(__dirname, '..', '..');
const REDOCLY = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: 'error' | 'warn'; message: string; location: { pointer: string }[] }[];
}

/** Runs `redocly lint` (redocly.yaml: the recommended rules) offline on one file; exits non-zero when it finds errors. */
function lint(file: string): Promise<LintReport> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [REDOCLY, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json', '--max-problems', '1000'],
      { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }, maxBuffer: 32 * 1024 * 1024 },
      (error, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout) as LintReport);
        } catch {
          reject(new Error(`redocly lint printed no report (${error?.message ?? 'exit 0'}):\n${stderr}`));
        }
      },
    );
  });
}

describe('The OpenAPI document, linted with Redocly recommended rules', () => {
  let app: NestExpressApplication;
  let dir: string;

  beforeAll(async () => {
    app = await createTestApp();
    dir = await mkdtemp(join(tmpdir(), 'dpa-openapi-'));
  });

  afterAll(async () => {
    await app.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('has no errors', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, (await request(app.getHttpServer()).get('/docs-json').expect(200)).text);
    const report = await lint(file);
    const show = (p: LintReport['problems'][number]) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`;
    console.log(
      `redocly lint of /docs-json: ${report.totals.errors} errors, ${report.totals.warnings} warnings${report.problems.length ? `\n${report.problems.map(show).join('\n')}` : ''}`,
    );
    expect(report.problems.filter((p) => p.severity === 'error').map(show)).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });
});
