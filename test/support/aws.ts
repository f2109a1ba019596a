import { DynamoDBClient, CreateTableCommand, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';

/** Credentials for the emulators; they accept any. */
export const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
export const localRegion = 'us-east-1';

export const dynamoClient = (): DynamoDBClient =>
  new DynamoDBClient({ endpoint: inject('dynamoEndpoint'), region: localRegion, credentials: localCredentials });

export const documentClient = (client: DynamoDBClient = dynamoClient()): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });

export const sqsClient = (): SQSClient => new SQSClient({ endpoint: inject('sqsEndpoint'), region: localRegion, credentials: localCredentials });

/** A table name no other test file uses, so files can run in parallel against one DynamoDB Local. */
export const uniqueName = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** Creates a table and waits until it exists. */
export const createTable = async (client: DynamoDBClient, input: CreateTableCommandInput): Promise<void> => {
  await client.send(new CreateTableCommand(input));
};
