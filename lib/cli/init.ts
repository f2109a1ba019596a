import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { cdkJsonContext } from '../infra/cdk-context';
import { CORE_PACKAGE } from '../infra/handler-metadata';
import { InputFileError, UsageError } from './errors';
import type { Command } from './router';
import { cliPackage } from './version';
import { COMMAND_HELP } from './help';

const USAGE = COMMAND_HELP.init.usage;

/** What a project made by `init` must not inherit from the template's working copy. */
export const LEFT_OUT: readonly string[] = ['node_modules', 'cdk.out', '.tessera', 'package-lock.json'];

const GITIGNORE = ['node_modules/', 'cdk.out/', '.tessera/', ''].join('\n');

/**
 * The starter template, examples/starter/, two levels above this module: the repository's root
 * above lib/cli/init.ts, and the package's dist/ above dist/lib/cli/init.js (the build copies
 * the template there).
 */
const templateRoot = (): string => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  if (!existsSync(join(root, 'examples', 'starter', 'package.json'))) {
    throw new Error(`tessera init: the starter template is missing next to ${fileURLToPath(import.meta.url)}`);
  }
  return root;
};

const ProjectManifest = z.looseObject({
  name: z.string(),
  dependencies: z.record(z.string(), z.string()),
  devDependencies: z.record(z.string(), z.string()).default({}),
});
const ProjectCdkJson = z.looseObject({ context: z.record(z.string(), z.unknown()).default({}) });

/**
 * The new project's package.json: the template's, with the project's name, and the core package
 * (a dependency) and this CLI's package (a dev dependency) at this CLI's version. The template
 * already carries its `allowScripts` (npm 11 asks for a decision on every dependency's install
 * script: esbuild's is not run, and CDK bundling does without it).
 */
const projectManifest = (text: string, dir: string, cli: { name: string; version: string }): unknown => {
  const manifest = ProjectManifest.parse(JSON.parse(text));
  return {
    ...manifest,
    name: projectName(dir),
    dependencies: { ...manifest.dependencies, [CORE_PACKAGE]: `^${cli.version}` },
    devDependencies: { ...manifest.devDependencies, [cli.name]: `^${cli.version}` },
  };
};

/**
 * The new project's cdk.json: the feature flags the local cloud synthesizes the construct with
 * (the core package's cdk.json, lib/infra/cdk-context.ts), so `cdk synth` and `tessera serve`
 * build the same template, then the starter's own context (its issuer and audience).
 */
const projectCdkJson = (text: string, flags: Record<string, unknown>): unknown => {
  const cdkJson = ProjectCdkJson.parse(JSON.parse(text));
  return { ...cdkJson, context: { ...flags, ...cdkJson.context } };
};

/** An npm package name from a directory name: lower case, `-` for anything else. */
const projectName = (dir: string): string =>
  basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '') || 'tessera-project';

/**
 * Options of `createInitCommand`; tests point it at another template.
 *
 * @example
 * createInitCommand({ root: '/path/to/package' });
 */
export interface InitOptions {
  /** The directory holding `examples/starter/`. @default this package's */
  readonly root?: string;
  /** The context the new project's cdk.json starts from. @default - this package's cdk.json context (its feature flags) */
  readonly featureFlags?: Readonly<Record<string, unknown>>;
}

/**
 * `tessera init DIR`: creates a new project in DIR (which must not exist, or be empty) from the
 * starter template shipped in the package: one worker kind (`todo-review`), its tests on
 * `@tessera-fanout/tessera/testing`, a CDK app and a run request. The project depends on the
 * core package and (for development) this CLI's package, at this CLI's version; its cdk.json
 * carries the feature flags the local cloud synthesizes with. Nothing is installed: the command prints the next steps.
 *
 * @example
 * await createInitCommand().run(['my-project'], processIo()); // 0, with the next steps on stdout
 */
export const createInitCommand = (options: InitOptions = {}): Command => ({
  ...COMMAND_HELP.init,
  run: async (args, io) => {
    let positionals: string[];
    try {
      ({ positionals } = parseArgs({ args: [...args], options: {}, allowPositionals: true, strict: true }));
    } catch (error) {
      throw new UsageError('init', error instanceof Error ? error.message : String(error), USAGE, { cause: error });
    }
    const [dir, ...extra] = positionals;
    if (dir === undefined || extra.length > 0) throw new UsageError('init', `expected one DIR (got ${positionals.length})`, USAGE);
    if (existsSync(dir) && (await readdir(dir)).length > 0) throw new InputFileError(dir, 'exists and is not empty: give a new directory');

    const root = options.root ?? templateRoot();
    const template = join(root, 'examples', 'starter');
    await mkdir(dir, { recursive: true });
    await cp(template, dir, { recursive: true, filter: (source) => !LEFT_OUT.includes(basename(source)) });
    const manifestPath = join(dir, 'package.json');
    await writeFile(manifestPath, `${JSON.stringify(projectManifest(await readFile(manifestPath, 'utf8'), dir, cliPackage()), null, 2)}\n`);
    const cdkJsonPath = join(dir, 'cdk.json');
    const flags = options.featureFlags ?? cdkJsonContext();
    await writeFile(cdkJsonPath, `${JSON.stringify(projectCdkJson(await readFile(cdkJsonPath, 'utf8'), flags), null, 2)}\n`);
    await writeFile(join(dir, '.gitignore'), GITIGNORE);

    const shown = relative(process.cwd(), resolve(dir)) || '.';
    io.out(
      [
        `Created ${shown}: the todo-review worker kind, its tests, a CDK app and a run request.`,
        'Next:',
        `  cd ${shown}`,
        '  npm install',
        '  npm test                                   # the worker kind, offline',
        '  npx tessera run requests/todo-review.json  # a whole run in the local cloud (needs Java 17)',
        'Then read README.md.',
      ].join('\n'),
    );
    return 0;
  },
});
