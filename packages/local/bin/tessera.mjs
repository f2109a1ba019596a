#!/usr/bin/env node
// The `tessera` command of the published @tessera-fanout/local package: runs its build (dist/).
import { launch } from './launch.mjs';

await launch(new URL('../dist/lib/cli/main.js', import.meta.url));
