// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'data/**', '**/*.config.*', 'scripts/*.mjs', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      // Fastify handlers and interface implementations are async without awaiting.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests read JSON bodies of responses (typed any) and assert on them.
    files: ['**/test/**/*.ts', '**/*.test.ts', '**/*.test.tsx', 'packages/e2e/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['packages/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@lamina/server*', '@lamina/web*', 'fastify*', 'react*'] }],
    },
  },
  {
    files: ['packages/web/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': ['error', { patterns: ['@lamina/server*', 'kysely', 'fastify*'] }],
    },
  },
  {
    files: ['packages/server/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['@lamina/web*', 'react*'] }] },
  },
  // Layers (docs/ARCHITECTURE.md): on the server platform/, access/, modules/, commands/ and the
  // route table (app.ts), each importing only those before it; on the web,
  // lib/ and util/ are the bottom, then api/, components/, features/, and app/ (the router and the
  // shell) on top: a feature never imports app/. `npm run check:cycles` refuses loops between
  // features (their order: docs/ARCHITECTURE.md, "The web's layers").
  {
    files: ['packages/server/src/platform/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@lamina/web*', 'react*', '**/access/**', '**/modules/**', '**/commands/**', '**/app.js'] },
      ],
    },
  },
  {
    files: ['packages/server/src/access/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@lamina/web*', 'react*', '**/modules/**', '**/commands/**', '**/app.js'] },
      ],
    },
  },
  {
    files: ['packages/server/src/modules/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@lamina/web*', 'react*', '**/commands/**', '**/app.js'] }],
    },
  },
  {
    files: ['packages/server/src/commands/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: ['@lamina/web*', 'react*', '**/app.js'] }] },
  },
  // Rules out of handlers (docs/ARCHITECTURE.md, "The server's kinds of file"): a route handler
  // parses, calls a service and presents. Who may do what is the route's policy; what a user may
  // see is the presenter's; what a list may search or sort by, and who may export, the service's.
  // So no handler reads the principal's permissions.
  {
    files: ['packages/server/src/**/*Routes.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.property.name='has']:matches([callee.object.property.name='actions'], [callee.object.name='actions'])",
          message:
            'A permission check in a route file is a rule: declare it in the policy, or move it into the service (what a list may search or sort by, who may export) or the presenter (what the user may see).',
        },
        {
          selector: "CallExpression[callee.name='mayViewCaseField']",
          message:
            'Which case fields a user may see is the presenter’s (casePresenter.ts), and what a list may search or sort by the service’s: not a route handler’s.',
        },
      ],
    },
  },
  {
    files: ['packages/web/src/api/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@lamina/server*', 'kysely', 'fastify*', '**/app/**', '**/features/**', '**/components/**'] },
      ],
    },
  },
  {
    files: ['packages/web/src/components/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['@lamina/server*', 'kysely', 'fastify*', '**/app/**', '**/features/**'] },
      ],
    },
  },
  {
    files: ['packages/web/src/features/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@lamina/server*', 'kysely', 'fastify*', '**/app/**'] }],
    },
  },
  {
    files: ['packages/web/src/lib/**/*.{ts,tsx}', 'packages/web/src/util/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            '@lamina/server*',
            'kysely',
            'fastify*',
            '**/app/**',
            '**/features/**',
            '**/api/**',
            '**/components/**',
          ],
        },
      ],
    },
  },
);
