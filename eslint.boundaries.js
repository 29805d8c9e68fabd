// The layers of design.md §2, kept by lint (docs/architecture.md): routes parse and map,
// services hold the rules and never see HTTP, repos hold the SQL, and a module reaches
// another only through its service or index, never its repo. Import cycles are caught by
// dpdm (`npm run lint:cycles`). test/lint-boundaries.test.ts breaks each rule on purpose.

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

const restrict = (...patterns) => ({
  'no-restricted-imports': ['error', { patterns: patterns.flat() }],
});

/** Flat-config entries, in order: a later entry's rule replaces an earlier one's for a file. */
export const boundaries = [
  { files: ['src/**/*.ts'], rules: restrict(pg) },
  { files: MODULE_FILES, rules: restrict(pg, otherModuleRepo, httpInServices, sqlOutsideRepos) },
  { files: REPO_FILES, rules: restrict(pg, otherModuleRepo, httpInServices) },
  { files: ROUTE_FILES, rules: restrict(pg, otherModuleRepo, sqlInRoutes) },
  { files: ['src/db/**'], rules: { 'no-restricted-imports': 'off' } },
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
    rules: { 'no-restricted-imports': 'off', 'no-restricted-properties': 'off' },
  },
];
