import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, sep } from 'node:path';
import type { LocalFanOutProps } from '../infra/fan-out-metadata';

/*
 * The synthesized template of the local cloud, cached by a hash of everything synthesis reads, so
 * a start that changed nothing skips importing aws-cdk-lib and synthesizing (docs/local-cloud.md).
 * A cached template is byte for byte what synthesis wrote; any changed input gives a new key.
 */

/** What the worker module contributes to synthesis: the construct reads exactly these of it. */
export interface WorkerModuleInputs {
  /** Absolute path of the worker module. */
  readonly path: string;
  /** The export holding its registry. */
  readonly exportName: string;
  /** Its kinds, in registry order (each becomes a queue, a mapping and settings). */
  readonly kinds: readonly string[];
}

/** Everything the local template is synthesized from. */
export interface TemplateInputs {
  /** The tessera package root: its `lib/` and `functions/` sources and its `cdk.json`. */
  readonly packageRoot: string;
  readonly workers: WorkerModuleInputs;
  readonly region: string;
  /** The fan-out's props the cloud was given (the project's app's, `TesseraCloudOptions.fanOut`), beyond the defaults. */
  readonly fanOut?: Partial<LocalFanOutProps>;
  /** Packages whose code runs during synthesis, by name: their installed versions. */
  readonly packageVersions: Readonly<Record<string, string>>;
  /** Environment variables the CDK reads (`CDK_*`), by name. */
  readonly cdkEnvironment: Readonly<Record<string, string>>;
}

/** Bumped when the key's recipe or the cache's file format changes. */
const FORMAT = 'tessera-local-template/1';
const SOURCE_FOLDERS = ['lib', 'functions'];
const SOURCE_FILE = /\.(ts|mts|js|mjs|cjs|json|java)$/;
/** Templates kept, newest first (one per worker module and source state in use). */
const KEEP = 8;

const sourceFiles = (root: string, folder: string): string[] => {
  let names: string[];
  try {
    names = readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' });
  } catch {
    return [];
  }
  return names
    .map((name) => join(folder, name))
    .filter((path) => SOURCE_FILE.test(path) && statSync(join(root, path)).isFile())
    .sort();
};

/**
 * The cache key: a SHA-256 over the package's `lib/` and `functions/` source files (paths and
 * contents; the construct's import closure lies inside them), its `cdk.json`, the worker module's
 * path, registry export and kinds, the fan-out props given, the region, the versions of the packages that run during
 * synthesis, and the CDK's environment variables.
 *
 * @example
 * templateCacheKey(await templateInputs('/repo/examples/app/workers.ts', 'us-east-1')) // 'a3f1…'
 */
export const templateCacheKey = (inputs: TemplateInputs): string => {
  const hash = createHash('sha256');
  const field = (name: string, value: string | Buffer) => {
    hash.update(`${name}\0${value.length}\0`);
    hash.update(value);
  };
  field('format', FORMAT);
  for (const path of SOURCE_FOLDERS.flatMap((folder) => sourceFiles(inputs.packageRoot, folder))) {
    field(`source ${path.split(sep).join('/')}`, readFileSync(join(inputs.packageRoot, path)));
  }
  let cdkJson: Buffer | string;
  try {
    cdkJson = readFileSync(join(inputs.packageRoot, 'cdk.json'));
  } catch {
    cdkJson = '(none)';
  }
  field('cdk.json', cdkJson);
  field('workers', JSON.stringify(inputs.workers));
  field('region', inputs.region);
  // Keys in a fixed order, so the same props always give the same key.
  if (inputs.fanOut !== undefined) field('fan-out props', canonicalJson(inputs.fanOut));
  field('packages', JSON.stringify(Object.entries(inputs.packageVersions).sort()));
  field('cdk environment', JSON.stringify(Object.entries(inputs.cdkEnvironment).sort()));
  return hash.digest('hex');
};

/** JSON with every object's keys sorted. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );

/** The packages whose code runs while the local template is synthesized. */
export const SYNTH_PACKAGES = ['aws-cdk-lib', 'constructs', 'cdk-nag'] as const;

/**
 * The installed versions of `names`, as resolved from `packageRoot` (`(missing)` when one is not
 * installed).
 *
 * @example
 * packageVersions('/repo', [...SYNTH_PACKAGES, CORE_PACKAGE]) // { 'aws-cdk-lib': '2.276.0', …, '@tessera-fanout/tessera': '0.1.0' }
 */
export const packageVersions = (packageRoot: string, names: readonly string[]): Record<string, string> => {
  const require = createRequire(join(packageRoot, 'package.json'));
  const versionOf = (path: string): string => {
    try {
      return String((JSON.parse(readFileSync(path, 'utf8')) as { version?: unknown }).version);
    } catch {
      return '(missing)';
    }
  };
  const versions: Record<string, string> = {};
  for (const name of names) {
    let path: string;
    try {
      path = require.resolve(`${name}/package.json`);
    } catch {
      versions[name] = '(missing)';
      continue;
    }
    versions[name] = versionOf(path);
  }
  return versions;
};

/** The `CDK_*` variables of an environment, which the CDK's `App` may read. */
export const cdkEnvironment = (env: NodeJS.ProcessEnv): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[0].startsWith('CDK_') && entry[1] !== undefined));

/** Where the cache entry of `key` lives. */
const entryFile = (dir: string, key: string): string => join(dir, `template-${key}.json`);

/** How a template was obtained, for the trace and the tests. */
export type TemplateSource = 'cache' | 'synthesized';

/**
 * The template of `key`: read from `dir` when an entry is there and parses, else `synthesize()`d
 * and stored (atomically, so concurrent starts never read half a file). A cache that cannot be
 * read or written is skipped, never fatal: the start then synthesizes as it would without one.
 *
 * @example
 * const { template } = await cachedTemplate({ dir, key, synthesize: () => synthesizeLocalTemplate(workers) });
 */
export const cachedTemplate = async (options: {
  readonly dir: string;
  readonly key: string;
  readonly synthesize: () => unknown | Promise<unknown>;
}): Promise<{ template: unknown; source: TemplateSource }> => {
  const file = entryFile(options.dir, options.key);
  try {
    const template: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof template === 'object' && template !== null) return { template, source: 'cache' };
  } catch {
    // absent or unreadable: synthesize
  }
  const template = await options.synthesize();
  try {
    mkdirSync(options.dir, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(template));
    renameSync(temporary, file);
    prune(options.dir);
  } catch {
    // a read-only or full disk costs the next start a synth, nothing more
  }
  return { template, source: 'synthesized' };
};

/** Keeps the newest {@link KEEP} templates. */
const prune = (dir: string): void => {
  const entries = readdirSync(dir)
    .filter((name) => name.startsWith('template-') && name.endsWith('.json'))
    .map((name) => ({ path: join(dir, name), mtime: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const stale of entries.slice(KEEP)) rmSync(stale.path, { force: true });
};
