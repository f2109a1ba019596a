/**
 * `@tessera-fanout/local`: the local cloud that `tessera serve` and `tessera run` start, for a
 * project's own tests too. It synthesizes the `TesseraFanOut` construct for a worker module, runs
 * the template on DynamoDB Local (Java 17+), an SQS emulator and local Step Functions, and serves
 * the HTTP API on 127.0.0.1 (docs/local-cloud.md).
 *
 * @example
 * import { LOCAL_AUTH, startTesseraCloud } from '@tessera-fanout/local';
 *
 * const cloud = await startTesseraCloud({ workers: 'src/workers.ts' });
 * const token = await cloud.mintToken({ tenant: 'acme', subject: 'me' });
 * const response = await fetch(`${cloud.apiUrl}/runs`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body });
 * await cloud.stop();
 */
export { LOCAL_AUTH, startTesseraCloud, type TesseraCloudOptions } from './tessera-cloud';
export type { LocalCloud, LocalCloudEndpoints, LocalCloudPorts } from './cloud';
export type { MintTokenOptions } from './jwt-authority';
export type { LocalLog, LocalLogEntry } from './log';
export type { LaunchingDynamoDbLocal } from './dynamodb-local';
export type { ProvisionedQueue, ProvisionedTable } from './provision';
export type { LocalFanOutProps } from '../infra/fan-out-metadata';
