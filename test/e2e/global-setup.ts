import type { TestProject } from 'vitest/node';
import { z } from 'zod';
import { STACK_OUTPUTS } from '../../lib/infra/stack-outputs';
import { E2E_BATCH_SUBTASKS } from './batch-size';

declare module 'vitest' {
  export interface ProvidedContext {
    e2e: {
      /** Base URL of the tessera API under test. */
      apiUrl: string;
      /** Tokens of two different tenants. */
      tokens: { acme: string; globex: string };
      /** The stack's outputs `SubtaskQueueUrls` (JSON) and `DeadLetterQueueUrl`. */
      outputs: { SubtaskQueueUrls: string; DeadLetterQueueUrl: string };
      /** Where SQS is, for the fault tests that deliver or read messages themselves. */
      sqs: { endpoint?: string; region: string };
    };
  }
}

/** Settings of a deployed stack, from the environment (see README, "End-to-end tests against AWS"). */
const Remote = z.object({
  TESSERA_API_URL: z.url(),
  TESSERA_TOKEN: z.string().min(1),
  TESSERA_OTHER_TENANT_TOKEN: z.string().min(1),
  TESSERA_SUBTASK_QUEUE_URLS: z.string().min(2),
  TESSERA_DEAD_LETTER_QUEUE_URL: z.url(),
  AWS_REGION: z.string().min(1),
});

/**
 * The end-to-end suite runs against whatever the environment names: a deployed stack when
 * TESSERA_API_URL is set (with the variables of `Remote`), otherwise the local cloud, started
 * here once for the whole suite and stopped afterwards. The tests see only URLs and tokens.
 */
export default async function setup(project: TestProject) {
  if (process.env.TESSERA_API_URL) {
    const env = Remote.parse(process.env);
    project.provide('e2e', {
      apiUrl: env.TESSERA_API_URL,
      tokens: { acme: env.TESSERA_TOKEN, globex: env.TESSERA_OTHER_TENANT_TOKEN },
      outputs: { SubtaskQueueUrls: env.TESSERA_SUBTASK_QUEUE_URLS, DeadLetterQueueUrl: env.TESSERA_DEAD_LETTER_QUEUE_URL },
      sqs: { region: env.AWS_REGION },
    });
    return undefined;
  }
  const { startTesseraCloud } = await import('../../lib/local/tessera-cloud');
  const { loopbackOrigin } = await import('../../lib/local/loopback-dns');
  const { exampleWorkerModule } = await import('../../examples/app/cdk');
  // The fault tests need the `chaos` kind, which only the example app's fault-workers.ts registers.
  // The local cloud's own faults (a lost invocation, a server that failed a request) are printed,
  // as `tessera serve` prints them: a test that fails because of one says so.
  const cloud = await startTesseraCloud({
    workers: exampleWorkerModule({ faultInjection: true }),
    batchSubtasks: E2E_BATCH_SUBTASKS,
    functionLogLevel: 'ERROR',
    log: (entry) => {
      if (entry.level === 'error') console.error(`[local cloud: ${entry.component}] ${entry.message}`);
    },
  });
  const token = (tenant: string) => cloud.mintToken({ tenant, subject: `e2e-${tenant}` });
  project.provide('e2e', {
    apiUrl: cloud.apiUrl ?? '',
    tokens: { acme: await token('acme'), globex: await token('globex') },
    outputs: {
      SubtaskQueueUrls: cloud.outputs[STACK_OUTPUTS.subtaskQueueUrls] ?? '',
      DeadLetterQueueUrl: cloud.outputs[STACK_OUTPUTS.deadLetterQueueUrl] ?? '',
    },
    // fauxqs's `sqs.<region>.localhost` host resolves only inside the cloud's own process.
    sqs: { endpoint: loopbackOrigin(cloud.endpoints.sqs), region: cloud.region },
  });
  return () => cloud.stop();
}
