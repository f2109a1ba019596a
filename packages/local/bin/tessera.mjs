#!/usr/bin/env node
// The `tessera` command of the @tessera-fanout/local package: runs its build (dist/). As the
// repository's own workspace (packages/local/, where `npx tessera` finds it in a clone) it runs
// the TypeScript sources instead, as bin/tessera.mjs does, so no build is needed there.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launch } from './launch.mjs';

const source = new URL('../../../lib/cli/main.ts', import.meta.url);
const inRepository = import.meta.url.endsWith('/packages/local/bin/tessera.mjs') && existsSync(fileURLToPath(source));
await launch(inRepository ? source : new URL('../dist/lib/cli/main.js', import.meta.url));
