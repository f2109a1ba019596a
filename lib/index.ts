/**
 * `@tessera-fanout/client` (re-exported as `@tessera-fanout/tessera`): the public contract of the
 * tessera HTTP API as zod schemas (the single source of its TypeScript types) and a typed client
 * of that API.
 *
 * @example
 * import { RunRequest, createTesseraClient } from '@tessera-fanout/client';
 * const client = createTesseraClient({ apiUrl, token });
 * const run = await client.createRun(RunRequest.parse(body));
 *
 * @packageDocumentation
 */
export * from './contract';
export * from './client';
