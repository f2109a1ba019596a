import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY, sourcesUnder, specifiersOf } from '../support/imports';

/**
 * `<tessera-run>` ships to browsers with no runtime dependencies: lib/web imports only its own
 * modules at run time, and the contract's types with `import type` (erased from the JavaScript).
 */
const WEB = 'lib/web';

/** Specifiers of a file's imports that are not type-only. */
const runtimeSpecifiers = (source: string): string[] => specifiersOf(source.replace(/(?:^|\n)\s*(?:import|export) type\s[^;]*;/g, '\n'));

describe('the web component', () => {
  it('tells type-only imports from runtime ones', () => {
    expect(runtimeSpecifiers("import type { RunResource } from '../contract';\nimport { x } from './time';")).toEqual(['./time']);
  });

  it('imports nothing at run time from outside lib/web', () => {
    const files = sourcesUnder(WEB);
    expect(files).toContain('lib/web/element.ts');
    const outside = files.flatMap((file) =>
      runtimeSpecifiers(readFileSync(join(REPOSITORY, file), 'utf8'))
        .filter((specifier) => !specifier.startsWith('.') || !relative(WEB, relative(REPOSITORY, resolve(REPOSITORY, dirname(file), specifier))).match(/^[^.]/))
        .map((specifier) => `${file} imports ${specifier}`),
    );
    expect(outside).toEqual([]);
  });
});
