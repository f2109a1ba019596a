#!/usr/bin/env node
// The `tessera` command in a clone of the repository: runs the TypeScript sources as they are
// (lib/cli/main.ts, through tsx). The published command is packages/local/bin/tessera.mjs, which
// runs the same code built.
import { launch } from '../packages/local/bin/launch.mjs';

await launch(new URL('../lib/cli/main.ts', import.meta.url));
