import { fileURLToPath } from 'node:url';
import type { TesseraFanOutProps } from '../../lib/infra/fan-out';
import { KIND_NAMES } from './kind-names';

/**
 * The example app's part of the `TesseraFanOut` props: its worker module and its per-kind
 * settings. A product team writes the same two props in its own CDK app, naming its own module.
 *
 * `scout-crm` gets 2 concurrent workers: its CRM search has a 22 s p95 and a long tail, and more
 * parallel calls into it only lengthen everyone's tail.
 *
 * @example
 * new TesseraFanOut(this, 'FanOut', { auth, ...exampleFanOut({ faultInjection: false }) });
 */
export const exampleFanOut = (options: { faultInjection: boolean }): Pick<TesseraFanOutProps, 'workers' | 'kinds'> => ({
  workers: { entry: exampleWorkerModule(options) },
  kinds: { [KIND_NAMES.scoutCrm]: { maxConcurrency: 2 } },
});

/**
 * The example app's worker module: `workers.ts`, or with fault injection `fault-workers.ts` (the
 * same kinds plus `chaos`), as an absolute path so it does not depend on the current directory.
 *
 * @example
 * exampleWorkerModule({ faultInjection: true }) // '…/examples/app/fault-workers.ts'
 */
export const exampleWorkerModule = (options: { faultInjection: boolean }): string =>
  fileURLToPath(new URL(options.faultInjection ? './fault-workers.ts' : './workers.ts', import.meta.url));
