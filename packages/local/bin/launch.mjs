/**
 * Starts the `tessera` command from its main module: bin/tessera.mjs of the repository runs the
 * TypeScript sources (lib/cli/main.ts), packages/local/bin/tessera.mjs the published build
 * (dist/lib/cli/main.js). tsx is registered in both cases, so a project's worker module and CDK
 * app may be TypeScript.
 *
 * @example
 * await launch(new URL('../dist/lib/cli/main.js', import.meta.url));
 */
import { register } from 'tsx/esm/api';

export const launch = async (mainModule) => {
  // zod is plain JavaScript that every command's TypeScript imports: loaded here, before tsx's
  // loader is registered, its ~95 modules load natively instead of one by one through the loader
  // (about 0.3 s of every command on a 2-core machine). Later imports of 'zod' resolve to the same
  // URL and get this same module instance.
  await import('zod');
  register();
  const { main } = await import(mainModule.href);
  process.exitCode = await main(process.argv.slice(2));
};
