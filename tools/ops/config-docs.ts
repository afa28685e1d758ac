/**
 * Writes the configuration tables of docs/configuration.md and the whole of .env.example from the
 * declarations in src/common/config/features/ (config-docs.spec.ts fails until they agree).
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '@tools/workspace/root';
import { CONFIG_FEATURES } from '@/common/config/app-config';
import { configurationTables, envExample, withConfigurationTables } from '@/common/config/config-docs';

const docs = join(ROOT, 'docs', 'configuration.md');
writeFileSync(docs, withConfigurationTables(readFileSync(docs, 'utf8'), configurationTables(CONFIG_FEATURES)));
writeFileSync(join(ROOT, '.env.example'), envExample(CONFIG_FEATURES));
console.log('wrote docs/configuration.md (tables) and .env.example');
