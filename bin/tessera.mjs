#!/usr/bin/env node
// The `tessera` command. In a clone of the repository it runs the TypeScript sources as they are
// (lib/cli/main.ts, through tsx); in the installed package, which ships no sources, it runs the
// built JavaScript (dist/lib/cli/main.js). tsx is registered in both cases, so the project's own
// worker module and CDK app may be TypeScript.
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';

// zod is plain JavaScript that every command's TypeScript imports: loaded here, before tsx's loader
// is registered, its ~95 modules load natively instead of one by one through the loader (about
// 0.3 s of every command on a 2-core machine). Later imports of 'zod' resolve to the same URL and
// get this same module instance.
await import('zod');
register();
const source = new URL('../lib/cli/main.ts', import.meta.url);
const built = new URL('../dist/lib/cli/main.js', import.meta.url);
const { main } = await import(existsSync(source) ? source.href : built.href);
process.exitCode = await main(process.argv.slice(2));
