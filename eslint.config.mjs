/**
 * ESLint, the fast pass (`npm run lint`): syntax-only rules, no type information, so it runs in
 * seconds. The one rule that needs types, switch exhaustiveness, runs in its own pass
 * (eslint.types.config.mjs, `npm run lint:types`), which builds the whole TypeScript program.
 * Formatting is Prettier's (.prettierrc.json); nothing here has an opinion on layout.
 */
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** Built, installed, cached or generated trees; .gitignore's entries, and what they hold. */
export const IGNORES = [
  '**/node_modules/**',
  'dist/**',
  'packages/*/dist/**',
  '**/cdk.out/**',
  'coverage/**',
  '.venv/**',
  '.venv-emulator/**',
  'test-artifacts/**',
  '**/.tessera/**',
];

export default tseslint.config(
  { ignores: IGNORES },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      // `_name` marks a value left out on purpose: a destructured field dropped from a copy, an unused parameter.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // The contract refuses control characters in text on purpose; its patterns name them.
      'no-control-regex': 'off',
      // A focused or skipped test passes whatever the rest of the code does.
      'no-restricted-properties': [
        'error',
        ...['describe', 'it', 'test'].flatMap((object) =>
          ['only', 'skip'].map((property) => ({ object, property, message: 'commit no focused or skipped test' })),
        ),
      ],
    },
  },
  {
    // The compiler resolves every name in TypeScript; the rule would only repeat it, without the types.
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    rules: { 'no-undef': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.cjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // What the package ships exports by name only, so every import names what it takes.
    files: ['lib/**/*.ts', 'functions/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'use a named export' }] },
  },
);
