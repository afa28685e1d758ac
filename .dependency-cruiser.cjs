// The house's import rules, checked by `npm run lint:imports` (and so by `npm test`): no circle of
// files, `common/` never imports a domain, pure logic imports nothing with I/O, a domain module
// imports only modules of a lower layer, and inside merge-queues/ each folder imports only the
// folders below it. `npm run lint:imports -- --output-type metrics` prints the figures per folder.

/** Domain modules by layer, top first: a module imports only modules of a lower layer. */
const LAYERS = [
  ['webhooks'],
  ['merge-queues'],
  ['members', 'service-accounts', 'usage', 'code-sources', 'organizations'],
  ['pipelines', 'api-keys', 'domains', 'git-servers', 'integrations'],
  ['execution-environments', 'module-versions', 'projects', 'reports', 'health', 'audit', 'git-providers'],
];

const MQ = '^src/modules/merge-queues';
/** The merge-queue module's root files that only the root itself (and the processes) may import. */
const MQ_ROOT_TOP = `${MQ}/[^/]+\\.(module|controller|service|processor)\\.ts$`;
const MQ_ROOT_REPOSITORY = `${MQ}/merge-queues\\.repository\\.ts$`;

const layerRules = LAYERS.slice(1).map((layer, i) => {
  const here = layer.join('|');
  const aboveOrHere = LAYERS.slice(0, i + 2)
    .flat()
    .join('|');
  return {
    name: `domain-layer-${i + 2}`,
    comment: `${layer.join(', ')} may import only modules of a lower layer (.dependency-cruiser.cjs LAYERS)`,
    severity: 'error',
    from: { path: `^src/modules/(${here})/` },
    to: { path: `^src/modules/(${aboveOrHere})/`, pathNot: '^src/modules/$1/' },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'files that import each other in a loop',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'common-imports-no-domain',
      comment: 'src/common/ is what every module uses: it never imports a domain',
      severity: 'error',
      from: { path: '^src/common/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'pure-planner',
      comment: 'the merge-queue planner is pure: it imports only itself',
      severity: 'error',
      from: { path: `${MQ}/planner/` },
      to: { pathNot: `${MQ}/planner/` },
    },
    {
      name: 'pure-sandbox-plan',
      comment: 'the sandbox-plan calculator is pure: itself and the instance catalogues',
      severity: 'error',
      from: { path: '^src/modules/pipelines/sandbox-plan/' },
      to: { pathNot: '^src/modules/(pipelines/sandbox-plan/|execution-environments/vendors/[^/]+\\.(json|ts)$)' },
    },
    ...layerRules,
    {
      name: 'mq-store-below-engine',
      comment: "engine/store/ holds the statements the engine runs: it imports no engine file but the lease's and the ids' leaves",
      severity: 'error',
      from: { path: `${MQ}/engine/store/` },
      to: { path: `${MQ}/(engine/[^/]+\\.ts$|changed-paths/|provider-events/|commit-statuses/|picture/|dto/)`, pathNot: `${MQ}/engine/(lease|ids)\\.ts$` },
    },
    {
      name: 'mq-engine-below-features',
      comment: 'engine/ is the worker layer under the features and the API: it imports neither',
      severity: 'error',
      from: { path: `${MQ}/engine/` },
      to: { path: `(${MQ}/(changed-paths|provider-events|picture|dto)/|${MQ_ROOT_TOP}|${MQ_ROOT_REPOSITORY})` },
    },
    {
      name: 'mq-commit-statuses-below-engine',
      comment: 'commit-statuses/ is what the engine calls after a commit: it imports nothing above the planner',
      severity: 'error',
      from: { path: `${MQ}/commit-statuses/` },
      to: { path: `(${MQ}/(engine|changed-paths|provider-events|picture|dto)/|${MQ_ROOT_TOP}|${MQ_ROOT_REPOSITORY})` },
    },
    {
      name: 'mq-changed-paths-below-provider-events',
      comment: 'changed-paths/ is used by provider events and the API, never the other way',
      severity: 'error',
      from: { path: `${MQ}/changed-paths/` },
      to: { path: `(${MQ}/(provider-events|picture|dto)/|${MQ_ROOT_TOP}|${MQ_ROOT_REPOSITORY})` },
    },
    {
      name: 'mq-provider-events-below-api',
      comment: "provider-events/ is used by the webhooks' worker: it imports no API entry",
      severity: 'error',
      from: { path: `${MQ}/provider-events/` },
      to: { path: `(${MQ}/picture/|${MQ_ROOT_TOP})` },
    },
    {
      name: 'mq-repository-below-features',
      comment: "the API's organization-scoped reads import the store only",
      severity: 'error',
      from: { path: MQ_ROOT_REPOSITORY },
      to: { path: `(${MQ}/(changed-paths|provider-events|commit-statuses|picture)/|${MQ}/engine/[^/]+\\.ts$|${MQ_ROOT_TOP})` },
    },
    {
      name: 'mq-picture-apart',
      comment: "picture/ draws the CLI's picture from the chain's JSON: it imports nothing of the module",
      severity: 'error',
      from: { path: `${MQ}/picture/` },
      to: { path: `${MQ}/`, pathNot: `${MQ}/picture/` },
    },
    {
      name: 'mq-api-reads-own-organization',
      comment: "the API's controller and service never reach the worker's all-organization repositories",
      severity: 'error',
      from: { path: `${MQ}/merge-queues\\.(controller|service)\\.ts$` },
      to: { path: `${MQ}/(engine/store/outbox|changed-paths/paths)\\.repository\\.ts$` },
    },
    {
      name: 'src-imports-no-test-code',
      comment: 'what ships in dist/ never imports test/ or tools/',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|tools)/' },
    },
    {
      name: 'tests-import-no-launcher',
      comment: 'tests use tools/workspace/, never the launchers in tools/ops/',
      severity: 'error',
      from: { path: '^test/' },
      to: { path: '^tools/ops/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^src/generated/|\\.spec\\.ts$)' },
    tsConfig: { fileName: 'tsconfig.check.json' },
    tsPreCompilationDeps: true,
  },
};
