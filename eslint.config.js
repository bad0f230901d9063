// SPDX-License-Identifier: Apache-2.0
// ESLint (flat config) over every JavaScript file of the repo; `npm run lint`, and a step of
// scripts/test.sh. ESLint's recommended rules, each folder with the globals of where its code
// runs, and lines of at most 120 columns as for C++ (.clang-format). The line limit comes from
// @stylistic because ESLint deprecated its own formatting rules (core max-len, since 8.53).
// index.html, web/*.css and the .d.ts files get the same limit from scripts/check-line-length.mjs.
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import globals from 'globals';

export default [
  { ignores: ['build/', 'wasm/dist/', 'web/dist/', 'node_modules/', 'test-results/'] },
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: globals.node },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': ['error', { code: 120, tabWidth: 2 }],
      // Leaving a key out by destructuring (`const { step, ...rest } = request`) is a use.
      'no-unused-vars': ['error', { ignoreRestSiblings: true }],
    },
  },
  // The page: modules for the browser, and its workers.
  { files: ['web/**/*.js'], languageOptions: { globals: globals.browser } },
  { files: ['web/serving-worker.js', 'web/plan-worker.js', 'web/pricing-worker.js'],
    languageOptions: { globals: globals.worker } },
  // The Plan panel imports the default prices as JSON (an import attribute, ES2025); esbuild bundles them.
  { files: ['web/plan-panel.js'], languageOptions: { ecmaVersion: 2025 } },
  // The loader runs in pages, workers and Node: it tests which one it is in.
  { files: ['wasm/stepcalc.js'], languageOptions: { globals: { ...globals.browser, ...globals.node } } },
  // Page tests and the page benchmark hand functions to Chromium (page.evaluate), which run
  // there: they see the browser's globals as well as Node's.
  {
    files: ['tests/web/**/*.mjs', 'bench/page.mjs'],
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
  },
  { files: ['tests/web/fixtures/worker.mjs'], languageOptions: { globals: globals.worker } },
];
