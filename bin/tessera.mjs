#!/usr/bin/env node
// The `tessera` command. It registers tsx so the TypeScript sources run as they are (no build
// step), then hands the arguments to lib/cli/main.ts and exits with its code.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../lib/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
