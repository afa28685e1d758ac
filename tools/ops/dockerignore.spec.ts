import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { excluded, ignoreRules } from './dockerignore';

describe(".dockerignore rules (the image rehearsal's build context)", () => {
  const rules = ignoreRules(readFileSync(join(__dirname, '..', '..', '.dockerignore'), 'utf8'));
  const out = (path: string) => excluded(rules, path);

  it('keeps what the Dockerfile copies', () => {
    for (const path of [
      'package.json',
      'package-lock.json',
      'prisma.config.ts',
      'prisma/schema.prisma',
      'prisma/migrations/20261125180000_domain_pending_claims/migration.sql',
      'src/main.ts',
      'tools/ops/postinstall.cjs',
      'tsconfig.json',
      'nest-cli.json',
    ])
      expect([path, out(path)]).toEqual([path, false]);
  });

  it('leaves out secrets, dependencies, build output and what the image does not need, directories with everything under them', () => {
    for (const path of [
      '.env',
      '.env.local',
      'node_modules/bullmq/package.json',
      'dist/main.js',
      'src/generated/prisma/client.ts',
      'test/e2e/domains.e2e-spec.ts',
      'tools/git-emulator/emulator.ts',
      '.git',
      'server.log',
      'Dockerfile',
      'docker-compose.yml',
    ])
      expect([path, out(path)]).toEqual([path, true]);
  });

  it('re-includes with `!` (the last matching rule wins), and `*` stays within one path segment as in filepath.Match', () => {
    expect(out('.env.example')).toBe(false);
    expect(out('src/common/notes.log')).toBe(false);
    const own = ignoreRules('docs\n**/*.tmp\n!docs/keep.md\n');
    expect(excluded(own, 'docs/a.md')).toBe(true);
    expect(excluded(own, 'docs/keep.md')).toBe(false);
    expect(excluded(own, 'src/a/b.tmp')).toBe(true);
    expect(excluded(own, 'src/a/b.tmpx')).toBe(false);
  });
});
