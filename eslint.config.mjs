// ESLint (flat config): the recommended JavaScript and TypeScript rules, plus the import boundaries of
// shared/STYLE.md: an app never imports another app, a lib never imports an app, libs/contracts imports nothing of ours.
// And the API never imports serviceSession (docs/decisions.md 85).
// Kept small on purpose (`npm run lint`, run by .ci/run before the tests); docs/testing.md says how it is checked.
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const SERVICE_SESSION_ONLY = 'the API passes the OwnedSession of SessionsRepository.findInOrganization; serviceSession is for the gateway and the dispatcher';

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', 'tmp/', 'coverage/', 'apps/dashboard/dist/', 'docs/', 'packages/*/dist/'] },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // `_name` says "deliberately unused" (a handler's signature, a destructured rest)
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  // the plain-Node scripts (scripts/, bench/, jest.config.js, test helpers in JS) are CommonJS: require is their import
  { files: ['**/*.js'], languageOptions: { sourceType: 'commonjs' }, rules: { '@typescript-eslint/no-require-imports': 'off' } },
  { files: ['apps/dashboard/src/**'], languageOptions: { globals: { ...globals.browser } } },
  {
    files: ['apps/**/*.ts', 'apps/**/*.tsx', 'libs/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': [
        { type: 'app', pattern: 'apps/*', capture: ['app'] },
        { type: 'contracts', pattern: 'libs/contracts' },
        { type: 'lib', pattern: 'libs/*', capture: ['lib'] },
      ],
      // import(), require() and re-exports cross boundaries as much as import statements do
      'boundaries/dependency-nodes': ['import', 'dynamic-import', 'require', 'export'],
      'import/resolver': { typescript: { project: './tsconfig.json' }, node: true },
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'allow',
          policies: [
            {
              from: { element: { type: 'app' } },
              disallow: { to: { element: { type: 'app', captured: { app: '!{{ from.element.captured.app }}' } } } },
              message: 'an app never imports another app: share it through a lib',
            },
            { from: { element: { type: 'lib' } }, disallow: { to: { element: { type: 'app' } } }, message: 'a lib never imports an app' },
            {
              from: { element: { type: 'contracts' } },
              disallow: { to: { element: { types: { anyOf: ['app', 'lib'] } } } },
              message: 'libs/contracts imports nothing of ours',
            },
          ],
        },
      ],
    },
  },
  // the API acts on a session once its organization is checked (an OwnedSession, docs/decisions.md 85): the producer
  // of a session scope without that check belongs to the gateway and the dispatcher
  {
    files: ['apps/api/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: '@app/database', importNames: ['serviceSession'], message: SERVICE_SESSION_ONLY }],
          patterns: [{ group: ['@app/database/**', '**/libs/database/**'], importNames: ['serviceSession'], message: SERVICE_SESSION_ONLY }],
        },
      ],
    },
  },
);
