/**
 * The worker module: tessera reads `registry` from it (the CDK construct at synth time, the
 * worker Lambda at run time, `tessera serve`/`tessera run` locally). Register every kind here.
 */
import { createRegistry } from '@tessera-fanout/tessera/workers';
import { todoReview } from './todo-review.js';

export const registry = createRegistry([todoReview]);
