/** Declarations of scripts/packages.mjs, for the TypeScript that imports it (the package tests). */
export interface PublishedPackage {
  readonly dir: string;
  readonly owns: readonly string[];
  readonly uses: readonly string[];
  readonly assets: readonly string[];
  readonly reexports: Readonly<Record<string, string>>;
  readonly runtime: Readonly<Record<string, string>>;
}
export declare const PACKAGES: readonly PublishedPackage[];
export declare const TEMPLATE_LEFT_OUT: readonly string[];
export declare const ownerOf: (path: string) => PublishedPackage | undefined;
