import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './app-config';

const ROOT = join(__dirname, '..', '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The variables EnvironmentVariables declares (one `NAME?: type;` or `NAME: type;` line each). */
function declared(): string[] {
  const source = read('src/common/config/app-config.ts');
  const body = source.slice(source.indexOf('export class EnvironmentVariables'), source.indexOf('export interface AppConfig'));
  return [...body.matchAll(/^\s+([A-Z][A-Z0-9_]+)\??: /gm)].map((m) => m[1]).sort();
}

describe('configuration documentation', () => {
  it('lists every variable in the configuration table of docs/configuration.md', () => {
    const table = read('docs/configuration.md');
    const documented = new Set([...table.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
    expect(declared().filter((name) => !documented.has(name))).toEqual([]);
  });

  it('lists every variable in .env.example, and .env.example as it stands is a valid configuration', () => {
    const env: Record<string, string> = {};
    for (const line of read('.env.example').split('\n')) {
      const match = /^([A-Z][A-Z0-9_]+)=(.*)$/.exec(line);
      if (match) env[match[1]] = match[2];
    }
    expect(Object.keys(env).sort()).toEqual(declared());
    // Production (its NODE_ENV) needs real keys; everything else is its default.
    const config = loadConfig({ ...env, CREDENTIALS_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}` });
    expect(config).toMatchObject({ environment: 'production', port: 3000, metricsPort: 9464, workerHealthPort: 9465, git: { localEnabled: false } });
  });
});
