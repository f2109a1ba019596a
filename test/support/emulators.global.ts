import type { TestProject } from 'vitest/node';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local';
import { startSqsLocal } from '../../lib/local/sqs-local';
import { clearWireCalls } from './wire-calls';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoEndpoint: string;
    sqsEndpoint: string;
  }
}

/** Starts DynamoDB Local and fauxqs once for the integration project, and stops exactly those. */
export default async function setup(project: TestProject) {
  // The ledger calls each file records are this run's only (test/iam reads them afterwards).
  clearWireCalls();
  const [dynamo, sqs] = await Promise.all([startDynamoDbLocal(), startSqsLocal()]);
  project.provide('dynamoEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', sqs.endpoint);
  return async () => {
    await Promise.all([dynamo.stop(), sqs.stop()]);
  };
}
