import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FEATURES, loadConfig } from './app-config';
import { configurationTables, envExample, TABLES_BEGIN, TABLES_END, withConfigurationTables } from './config-docs';

const ROOT = join(__dirname, '..', '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const KEY = `k1:${Buffer.alloc(32, 1).toString('base64')}`;

/** The variables the features declare. */
function declared(): string[] {
  return CONFIG_FEATURES.flatMap((feature) => Object.keys(feature.variables)).sort();
}

function envExampleValues(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of read('.env.example').split('\n')) {
    const match = /^([A-Z][A-Z0-9_]+)=(.*)$/.exec(line);
    if (match) env[match[1]] = match[2];
  }
  return env;
}

describe('configuration documentation', () => {
  it('lists every variable in the configuration table of docs/configuration.md', () => {
    const table = read('docs/configuration.md');
    const documented = new Set([...table.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
    expect(declared().filter((name) => !documented.has(name))).toEqual([]);
  });

  it('lists every variable in .env.example, and .env.example as it stands is a valid configuration', () => {
    const env = envExampleValues();
    expect(Object.keys(env).sort()).toEqual(declared());
    // Production (its NODE_ENV) needs real keys; everything else is its default.
    const config = loadConfig({ ...env, CREDENTIALS_KEYS: KEY });
    expect(config).toMatchObject({ environment: 'production', port: 3000, metricsPort: 9464, workerHealthPort: 9465, git: { localEnabled: false } });
  });

  it('declares each variable once, in one feature', () => {
    expect(new Set(declared()).size).toBe(declared().length);
    expect(declared()).toHaveLength(103);
  });

  it('has the tables of docs/configuration.md as the declarations write them (name, default, allowed values, doc line): `npm run config:docs`', () => {
    const page = read('docs/configuration.md');
    expect(page).toBe(withConfigurationTables(page, configurationTables(CONFIG_FEATURES)));
    // The hand-written text around the tables stays.
    expect(page.indexOf('## Configuration')).toBeLessThan(page.indexOf(TABLES_BEGIN));
    expect(page.indexOf(TABLES_END)).toBeLessThan(page.indexOf('`.env.example` lists every'));
  });

  it('has .env.example as the declarations write it: `npm run config:docs`', () => {
    expect(read('.env.example')).toBe(envExample(CONFIG_FEATURES));
  });

  it('gives in .env.example the default of every variable (or, for those without one, what leaves it unset)', () => {
    const env = envExampleValues();
    const required = { DATABASE_URL: env.DATABASE_URL, REDIS_URL: env.REDIS_URL, CREDENTIALS_KEYS: KEY };
    expect(loadConfig({ ...env, ...required })).toEqual(loadConfig(required));
  });

  it('leaves bounds to the Allowed column (derived from the declarations) rather than restating them in a doc line', () => {
    const restated = CONFIG_FEATURES.flatMap((feature) => Object.entries(feature.variables))
      .filter(([, variable]) => /\d+–\d+/.test(variable.doc))
      .map(([name]) => name);
    expect(restated).toEqual([]);
  });
});
