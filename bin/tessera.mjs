#!/usr/bin/env node
// The `tessera` command. In a clone of the repository it runs the TypeScript sources as they are
// (lib/cli/main.ts, through tsx); in the installed package, which ships no sources, it runs the
// built JavaScript (dist/lib/cli/main.js). tsx is registered in both cases, so the project's own
// worker module and CDK app may be TypeScript.
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';

// tessera runs locally on Node 20 on purpose (README, "Node versions"); the AWS SDK's notice that
// its 2027 releases need Node 22 would otherwise interrupt every command's output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

register();
const source = new URL('../lib/cli/main.ts', import.meta.url);
const built = new URL('../dist/lib/cli/main.js', import.meta.url);
const { main } = await import(existsSync(source) ? source.href : built.href);
process.exitCode = await main(process.argv.slice(2));
