import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

// Layers (design.md §2): SQL lives in a module's repo.ts (or repo/ folder), and a module
// reaches another through its service or index.ts, never its repo.
const poolFromDb = {
  group: ['pg'],
  message: 'import the pool from src/db only',
  allowTypeImports: true,
};
const noOtherRepo = {
  regex: '^(\\.\\./)+[a-z-]+/repo(\\.js$|/)',
  message: "another module's repo: use its service or index.ts",
};
const sqlInRepos = {
  group: ['drizzle-orm'],
  message: "SQL lives in the module's repo.ts or repo/ (src/lib/list.ts helps repos only)",
};

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', 'console/dist/', 'sdk/dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // Fastify handlers are async by contract even when they do not await.
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-restricted-imports': ['error', { patterns: [poolFromDb, noOtherRepo] }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/repo.ts', 'src/**/repo/**', 'src/lib/list.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [poolFromDb, noOtherRepo, sqlInRepos] }],
    },
  },
  {
    // Until auth's SQL moves into repos and it reaches wallets through their index.ts.
    files: ['src/modules/auth/**', 'src/modules/wallets/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [poolFromDb] }] },
  },
  {
    files: ['src/db/**', 'test/**', 'bench/**', '**/*.test.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    files: ['**/*.test.ts', 'test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  prettier,
  // Plain-JavaScript worker threads (src/lib/crypto/recover-worker.mjs): no types to check.
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
