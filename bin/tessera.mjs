#!/usr/bin/env node
// The `tessera` command. It registers tsx so the TypeScript sources run as they are (no build
// step), then hands the arguments to lib/cli/main.ts and exits with its code.
import { register } from 'tsx/esm/api';

// tessera runs locally on Node 20 on purpose (README, "Node versions"); the AWS SDK's notice that
// its 2027 releases need Node 22 would otherwise interrupt every command's output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

register();
const { main } = await import('../lib/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
