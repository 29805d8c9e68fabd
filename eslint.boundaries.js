// The layers, kept by lint (docs/architecture.md, "Layers, kept by lint"): routes parse and map,
// services hold the rules and never see HTTP, repos hold the SQL, and a module reaches
// another only through its index.ts, never its repo (an index.ts hands on nothing of its
// repo either). Import cycles are caught by
// dpdm (`npm run lint:cycles`). src/lint-boundaries.test.ts breaks each rule on purpose.

import path from 'node:path';

const ROUTE_FILES = [
  'src/modules/**/routes.ts',
  'src/modules/**/*-routes.ts',
  'src/modules/**/*-route.ts',
];
const REPO_FILES = ['src/modules/**/repo.ts', 'src/modules/**/repo/**/*.ts'];
const MODULE_FILES = ['src/modules/**/*.ts'];
const TEST_FILES = ['**/*.test.ts', 'test/**', 'bench/**', 'scripts/**'];

const pg = {
  group: ['pg'],
  message: 'only src/db opens connections; repos get an executor from it',
  allowTypeImports: true,
};
// Tracing off must cost nothing (docs/decisions.md, "Traces and queue metrics"): the SDK is
// loaded by src/lib/otel.ts alone, through a dynamic import, and only when tracing is on.
const otel = {
  group: ['@opentelemetry/*'],
  message: 'only src/lib/otel.ts loads OpenTelemetry (when tracing is on); use src/lib/tracing.ts',
  allowTypeImports: true,
};
const otherModuleRepo = {
  // `../<module>/repo.js`, `../../<module>/repo/x.js`: another module's SQL. A module's own
  // repo is reached as `./repo.js` or `../repo.js`, which this leaves alone.
  regex: '^(\\.\\./)+[a-z0-9-]+/repo(\\.js|/.*)?$',
  message: "use the other module's service or index.ts, never its repo",
};
// src/lib/list.ts builds SQL for repos; services parse the query and pass typed filters.
const listSql = {
  group: ['**/lib/list.js'],
  importNames: ['byCreation', 'keysetCondition', 'orderBy', 'dateFilters', 'prefixMatch', 'and'],
  message: "list.ts's SQL helpers are for repos: SQL lives in repos",
};
const sqlInRoutes = [
  {
    regex: '(^|/)repo(\\.js|/.*)?$',
    message: 'routes parse and map; they call a service, never a repo',
  },
  { group: ['drizzle-orm', 'drizzle-orm/*'], message: 'SQL lives in repos' },
  listSql,
];
const httpInServices = [
  { group: ['fastify', '@fastify/*'], message: 'services never see HTTP; routes map for them' },
  {
    regex: '^(\\.\\./)+http(/.*)?$',
    message: 'services never see HTTP (src/http); routes map for them',
  },
];
const sqlOutsideRepos = [
  {
    group: ['drizzle-orm', 'drizzle-orm/*'],
    message: 'SQL lives in repos',
    allowTypeImports: true,
  },
  listSql,
];

/**
 * Where a path of src/modules/ points: the module and the path inside it; null elsewhere.
 * @param {string} p
 * @returns {{ module: string, inner: string } | null}
 */
function inModules(p) {
  const at = p.lastIndexOf('src/modules/');
  if (at < 0) return null;
  const [module, ...inner] = p.slice(at + 'src/modules/'.length).split('/');
  return { module, inner: inner.join('/') };
}

const REPO_SOURCE = /(^|\/)repo(\.js|\/.*)?$/;

/**
 * Modules meet only at their faces: a module imports (or re-exports, types included) another
 * module only through that module's `index.ts`, and an `index.ts` hands on nothing of its
 * own repo, so a repo function cannot become another module's by a re-export.
 * @type {import('eslint').Rule.RuleModule}
 */
const moduleFaces = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      face: "import another module only through its index.ts ('{{module}}/index.js'), types included",
      repo: "an index.ts re-exports nothing of its repo: hand on a service's function or a type's own file",
    },
  },
  create(context) {
    const file = context.filename.replaceAll('\\', '/');
    const from = inModules(file);
    if (!from) return {};
    const isIndex = from.inner === 'index.ts';
    /**
     * @param {import('eslint').Rule.Node} node
     * @param {unknown} source
     */
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      if (isIndex && REPO_SOURCE.test(source)) {
        context.report({ node, messageId: 'repo' });
        return;
      }
      const to = inModules(path.posix.join(path.posix.dirname(file), source));
      if (!to || to.module === from.module || to.inner === 'index.js') return;
      context.report({ node, messageId: 'face', data: { module: to.module } });
    };
    return {
      ImportDeclaration: (n) => check(n, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n, n.source.value),
      ExportAllDeclaration: (n) => check(n, n.source.value),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n, n.source.value),
    };
  },
};

const restrict = (...patterns) => ({
  'no-restricted-imports': ['error', { patterns: patterns.flat() }],
});

/** Flat-config entries, in order: a later entry's rule replaces an earlier one's for a file. */
export const boundaries = [
  { files: ['src/**/*.ts'], rules: restrict(pg, otel) },
  {
    files: MODULE_FILES,
    plugins: { layers: { rules: { 'module-faces': moduleFaces } } },
    rules: { 'layers/module-faces': 'error' },
  },
  {
    files: MODULE_FILES,
    rules: restrict(pg, otel, otherModuleRepo, httpInServices, sqlOutsideRepos),
  },
  { files: REPO_FILES, rules: restrict(pg, otel, otherModuleRepo, httpInServices) },
  { files: ROUTE_FILES, rules: restrict(pg, otel, otherModuleRepo, sqlInRoutes) },
  { files: ['src/db/**'], rules: restrict(otel) },
  { files: ['src/lib/otel.ts'], rules: { 'no-restricted-imports': 'off' } },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read settings from src/config.ts' },
      ],
    },
  },
  {
    files: TEST_FILES,
    rules: {
      'no-restricted-imports': 'off',
      'no-restricted-properties': 'off',
      'layers/module-faces': 'off',
    },
  },
];
