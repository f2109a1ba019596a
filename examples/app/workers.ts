/**
 * The example app's worker module: what `npm start`, `tessera run` (through package.json's
 * `"tessera": { "workers": ... }`) and the example CDK app (`bin/app.ts`) run. A product team's
 * own module looks just like this one, importing from `@tessera-fanout/tessera/workers`.
 */
import { createRegistry } from '../../lib/workers';
import { createReferenceKinds } from './kinds';
import { scoutSynthesizer } from './synthesis';

export const registry = createRegistry(createReferenceKinds(), { synthesizer: scoutSynthesizer });
