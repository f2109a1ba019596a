import { DescribeExecutionCommand, SFNClient, type DescribeExecutionCommandOutput } from '@aws-sdk/client-sfn';
import { setTimeout as sleep } from 'node:timers/promises';
import { inject } from 'vitest';
import { startLocalCloud, type LocalCloud, type LocalCloudOptions } from '../../lib/local/cloud';
import { LOCAL_CREDENTIALS } from '../../lib/local/lambda-client';
import { uniqueName } from '../support/aws';
import { REPO_ROOT, synthTestStack } from './stack';

/**
 * Starts the local cloud for the test stack on the emulators the integration project shares, with
 * its own table and queue names so test files can run side by side.
 */
export const startTestCloud = (overrides: Partial<LocalCloudOptions> = {}): Promise<LocalCloud> =>
  startLocalCloud({
    template: synthTestStack(),
    repoRoot: REPO_ROOT,
    emulators: { dynamodbEndpoint: inject('dynamoEndpoint'), sqsEndpoint: inject('sqsEndpoint') },
    namePrefix: `${uniqueName('h')}-`,
    ...overrides,
  });

export const sfnClient = (cloud: LocalCloud): SFNClient =>
  new SFNClient({ endpoint: cloud.endpoints.stepFunctions, region: cloud.region, credentials: LOCAL_CREDENTIALS });

/**
 * Polls until `probe` returns a value other than `undefined`. A wait, not an assertion about speed:
 * the bound only turns a hang into a failure that says what it waited for.
 */
export const eventually = async <T>(what: string, probe: () => Promise<T | undefined>, boundMs = 20_000): Promise<T> => {
  const giveUp = Date.now() + boundMs;
  while (Date.now() < giveUp) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
};

/** Polls DescribeExecution through the local endpoint until the execution is no longer RUNNING. */
export const finishedExecution = (sfn: SFNClient, executionArn: string): Promise<DescribeExecutionCommandOutput> =>
  eventually(`execution ${executionArn} to finish`, async () => {
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    return described.status === 'RUNNING' ? undefined : described;
  });

/** A parsed execution output; the JSON text comes from the local endpoint under test. */
export const outputOf = (described: DescribeExecutionCommandOutput): unknown => JSON.parse(described.output ?? 'null');
