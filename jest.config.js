// NestJS 12 and some of its dependencies ship ESM only: @swc/jest compiles them to CommonJS with
// the rest, and transformIgnorePatterns lets them through.
const esmOnly = [
  '@nestjs',
  '@octokit',
  'universal-user-agent',
  'before-after-hook',
  'fast-content-type-parse',
  'json-with-bigint',
  'request-filtering-agent',
  'content-type',
  'file-type',
  'uid',
  'load-esm',
  'strtok3',
  'token-types',
  '@tokenizer',
  'uint8array-extras',
  '@borewit',
  'universal-github-app-jwt',
  'toad-cache',
];

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

const common = {
  rootDir: __dirname,
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleNameMapper: { '^@/(.*)$': '<rootDir>/src/$1', '^@test/(.*)$': '<rootDir>/test/$1', '^@tools/(.*)$': '<rootDir>/tools/$1' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
  testEnvironment: 'node',
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/tools/**/*.spec.ts', '<rootDir>/test/bench/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      setupFiles: ['<rootDir>/test/support/env.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.setup.ts', '<rootDir>/test/support/openapi-validation.setup.ts'],
    },
  ],
};
