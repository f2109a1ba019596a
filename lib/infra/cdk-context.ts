import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { PACKAGE_ROOT } from './handler-metadata';

const CdkJson = z.object({ app: z.string(), context: z.record(z.string(), z.unknown()) });

/**
 * The feature flags and context of `cdk.json`, so an app built in code (the local cloud, the
 * tests) synthesizes exactly what `npx cdk synth` would.
 *
 * @example
 * new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
 */
export const cdkJsonContext = (): Record<string, unknown> => CdkJson.parse(JSON.parse(readFileSync(join(PACKAGE_ROOT, 'cdk.json'), 'utf8'))).context;
