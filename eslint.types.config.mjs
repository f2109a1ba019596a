/**
 * ESLint, the type-aware pass (`npm run lint:types`): the rules that need the TypeScript program.
 * It builds that program once for the whole tree, which takes about as long as `tsc --noEmit`,
 * so it runs apart from the fast pass (eslint.config.mjs) and repeats none of its rules.
 */
import tseslint from 'typescript-eslint';
import { IGNORES } from './eslint.config.mjs';

export default tseslint.config(
  { ignores: IGNORES },
  {
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    // Report nothing about disable comments for rules this pass does not run (the fast pass's).
    linterOptions: { reportUnusedDisableDirectives: 'off' },
    rules: {
      // Every case of a union, spelled out: a `default` does not stand in for a forgotten member,
      // so a new member (a terminal state, a gap kind) is flagged wherever it is switched on.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false, requireDefaultForNonUnion: false }],
    },
  },
);
