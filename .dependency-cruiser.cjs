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
  return forbid(
    `domain-layer-${i + 2}`,
    `${layer.join(', ')} may import only modules of a lower layer (.dependency-cruiser.cjs LAYERS)`,
    { path: `^src/modules/(${here})/` },
    { path: `^src/modules/(${aboveOrHere})/`, pathNot: '^src/modules/$1/' },
  );
});

/** A forbidden import: from files matching `from` to files matching `to`. */
function forbid(name, comment, from, to) {
  return { name, comment, severity: 'error', from, to };
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    forbid('no-circular', 'files that import each other in a loop', {}, { circular: true }),
    forbid('common-imports-no-domain', 'src/common/ is what every module uses: it never imports a domain', { path: '^src/common/' }, { path: '^src/modules/' }),
    forbid('pure-planner', 'the merge-queue planner is pure: it imports only itself', { path: `${MQ}/planner/` }, { pathNot: `${MQ}/planner/` }),
    forbid(
      'pure-sandbox-plan',
      'the sandbox-plan calculator is pure: itself and the instance catalogues',
      { path: '^src/modules/pipelines/sandbox-plan/' },
      { pathNot: '^src/modules/(pipelines/sandbox-plan/|execution-environments/vendors/[^/]+\\.(json|ts)$)' },
    ),
    ...layerRules,
    forbid(
      'mq-store-below-engine',
      "engine/store/ holds the statements the engine runs: it imports no engine file but the lease's and the ids' leaves",
      { path: `${MQ}/engine/store/` },
      { path: `${MQ}/(engine/[^/]+\\.ts$|changed-paths/|provider-events/|commit-statuses/|picture/|dto/)`, pathNot: `${MQ}/engine/(lease|ids)\\.ts$` },
    ),
    forbid(
      'mq-engine-below-features',
      'engine/ is the worker layer under the features and the API: it imports neither',
      { path: `${MQ}/engine/` },
      { path: `(${MQ}/(changed-paths|provider-events|picture|dto)/|${MQ_ROOT_TOP}|${MQ_ROOT_REPOSITORY})` },
    ),
    forbid(
      'mq-commit-statuses-below-engine',
      'commit-statuses/ is what the engine calls after a commit: it imports nothing above the planner',
      { path: `${MQ}/commit-statuses/` },
      { path: `(${MQ}/(engine|changed-paths|provider-events|picture|dto)/|${MQ_ROOT_TOP}|${MQ_ROOT_REPOSITORY})` },
    ),
    forbid(
      'mq-changed-paths-below-provider-events',
      'changed-paths/ is used by provider events and the API, never the other way',
      { path: `${MQ}/changed-paths/` },
      { path: `(${MQ}/(provider-events|picture|dto)/|${MQ_ROOT_TOP}|${MQ_ROOT_REPOSITORY})` },
    ),
    forbid(
      'mq-provider-events-below-api',
      "provider-events/ is used by the webhooks' worker: it imports no API entry",
      { path: `${MQ}/provider-events/` },
      { path: `(${MQ}/picture/|${MQ_ROOT_TOP})` },
    ),
    forbid(
      'mq-repository-below-features',
      "the API's organization-scoped reads import the store only",
      { path: MQ_ROOT_REPOSITORY },
      { path: `(${MQ}/(changed-paths|provider-events|commit-statuses|picture)/|${MQ}/engine/[^/]+\\.ts$|${MQ_ROOT_TOP})` },
    ),
    forbid(
      'mq-picture-apart',
      "picture/ draws the CLI's picture from the chain's JSON: it imports nothing of the module",
      { path: `${MQ}/picture/` },
      { path: `${MQ}/`, pathNot: `${MQ}/picture/` },
    ),
    forbid(
      'mq-api-reads-own-organization',
      "the API's controller and service never reach the worker's all-organization repositories",
      { path: `${MQ}/merge-queues\\.(controller|service)\\.ts$` },
      { path: `${MQ}/(engine/store/outbox|changed-paths/paths)\\.repository\\.ts$` },
    ),
    forbid('src-imports-no-test-code', 'what ships in dist/ never imports test/ or tools/', { path: '^src/' }, { path: '^(test|tools)/' }),
    forbid('tests-import-no-launcher', 'tests use tools/workspace/, never the launchers in tools/ops/', { path: '^test/' }, { path: '^tools/ops/' }),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^src/generated/|\\.spec\\.ts$)' },
    tsConfig: { fileName: 'tsconfig.check.json' },
    tsPreCompilationDeps: true,
  },
};
