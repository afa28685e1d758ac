import type { Feature } from './variables';

/** Where the generated tables of docs/configuration.md begin and end; the text around them is written by hand. */
export const TABLES_BEGIN =
  '<!-- Written by `npm run config:docs` from src/common/config/features/*.config.ts: edit the declarations there, not these tables. -->';
export const TABLES_END = '<!-- End of the generated tables. -->';

const ENV_EXAMPLE_HEADER = `# Every configuration variable (docs/configuration.md), with its default. Copy to .env and fill in
# what you need; an empty value counts as unset. Only DATABASE_URL, REDIS_URL and, in production
# (what an unset NODE_ENV means), CREDENTIALS_KEYS are required.
# Written by \`npm run config:docs\` from src/common/config/features/*.config.ts.`;

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** One table per feature under its own heading: every variable with its default, what it allows and its doc line, in declaration order. */
export function configurationTables(features: readonly Feature[]): string {
  const sections = features.map(({ title, variables }) =>
    [
      `### ${title}`,
      '',
      '| Variable | Default | Allowed | Meaning |',
      '|---|---|---|---|',
      ...Object.entries(variables).map(([name, v]) => `| \`${name}\` | ${cell(v.shownDefault)} | ${cell(v.allowed)} | ${cell(v.doc)} |`),
    ].join('\n'),
  );
  return [TABLES_BEGIN, ...sections, TABLES_END].join('\n\n');
}

/** `markdown` with the part between TABLES_BEGIN and TABLES_END (markers included) replaced by `tables`. */
export function withConfigurationTables(markdown: string, tables: string): string {
  const begin = markdown.indexOf(TABLES_BEGIN);
  const end = markdown.indexOf(TABLES_END);
  if (begin < 0 || end < begin) throw new Error('docs/configuration.md has lost the markers around its generated tables');
  return markdown.slice(0, begin) + tables + markdown.slice(end + TABLES_END.length);
}

/** .env.example: every variable with its default (or an example), each feature's under its heading, comments where the name is not enough. */
export function envExample(features: readonly Feature[]): string {
  const sections = features.map(({ title, variables }) =>
    [
      `# --- ${title} ---`,
      ...Object.entries(variables).flatMap(([name, v]) => [...(v.comment?.split('\n').map((line) => `# ${line}`) ?? []), `${name}=${v.example}`]),
    ].join('\n'),
  );
  return `${[ENV_EXAMPLE_HEADER, ...sections].join('\n\n')}\n`;
}
