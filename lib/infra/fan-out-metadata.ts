import { z } from 'zod';
import { WorkerKind } from '../contract';

/*
 * What a synthesized `TesseraFanOut` tells the local cloud about itself. The construct writes it
 * as construct metadata (`node.addMetadata`), which the CDK copies into the cloud assembly's
 * manifest.json under the construct's path; `tessera serve` synthesizes the project's app, reads
 * it back from there and runs the local cloud with the same settings (lib/local/app-fan-out.ts).
 * The manifest, not the template: the deployed template stays what it was, and the manifest keeps
 * the construct's path, by which a user picks one fan-out of several. This module is CDK-free so
 * the local cloud reads the metadata without importing aws-cdk-lib.
 */

/**
 * The construct-metadata type of a `TesseraFanOut` in a cloud assembly's manifest.
 *
 * @example
 * manifest.artifacts.TodoReview.metadata['/TodoReview/FanOut'] // [{ type: 'tessera:fan-out', data: { version: 1, … } }]
 */
export const FAN_OUT_METADATA_KEY = 'tessera:fan-out';

/**
 * The fan-out's settings that the local cloud honours, after the construct applied its defaults
 * and validated them, with durations in seconds. Auth and the model are not among them: the local
 * cloud signs its own tokens and runs the offline model, whatever the deployment uses. Only the
 * shape is checked here; the ranges are the construct's, checked again when the local cloud
 * synthesizes its own fan-out from these values.
 */
export const FanOutMetadata = z.object({
  /** Bumped when a field changes meaning, so a cloud never misreads another version's metadata. */
  version: z.literal(1),
  /** Absolute path of the worker module, as the construct resolved `workers.entry`. */
  workers: z.string().min(1),
  /** Every kind of the worker module with its settings (`maxConcurrency` applied). */
  kinds: z.record(WorkerKind, z.object({ maxConcurrency: z.int() })),
  workerTimeoutSeconds: z.int(),
  workerBatchingWindowSeconds: z.int(),
  maxDeadlineSeconds: z.int(),
  mapMaxConcurrency: z.int(),
  batchConcurrency: z.int(),
  batchSubtasks: z.int(),
  tenantDailyAllowance: z.object({ modelCalls: z.int(), costLimit: z.int() }),
});
export type FanOutMetadata = z.infer<typeof FanOutMetadata>;

/** The props of a fan-out the local cloud builds: the metadata without its version and worker module. */
export type LocalFanOutProps = Omit<FanOutMetadata, 'version' | 'workers'>;
