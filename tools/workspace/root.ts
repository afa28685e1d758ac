import { resolve } from 'node:path';

/** The checkout's root directory (where package.json is). */
export const ROOT = resolve(__dirname, '..', '..');
