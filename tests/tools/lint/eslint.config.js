// ESLint's settings for the web app's modules (web/*.js): the recommended
// rules, as browser ES modules. Run by scripts/check-web.
const js = require('@eslint/js');
const globals = require('globals');

module.exports = [
  {
    files: ['web/**/*.js'],
    ...js.configs.recommended,
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      globals: globals.browser,
    },
    rules: {
      ...js.configs.recommended.rules,
      'no-unused-vars': ['error', { args: 'none' }],
      eqeqeq: ['error', 'smart'],
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
];
