// Lint: typescript-eslint's type-checked rules for the extension and its tests; the recommended
// JavaScript rules for the build script and the end-to-end driver.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeGlobals = {
  process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', URLSearchParams: 'readonly',
  setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
  __dirname: 'readonly', require: 'readonly', module: 'writable', document: 'readonly', window: 'readonly',
};

export default tseslint.config(
  { ignores: ['dist/', 'out/', 'bundled/', 'node_modules/', '*.vsix'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      eqeqeq: 'error',
      curly: 'error',
    },
  },
  {
    files: ['test/**/*.ts'],
    // node:test's describe() and it() return promises the runner itself awaits.
    rules: { '@typescript-eslint/require-await': 'off', '@typescript-eslint/no-floating-promises': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    languageOptions: { globals: nodeGlobals, sourceType: 'module' },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
  },
);
