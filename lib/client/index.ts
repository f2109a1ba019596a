/** A typed client of the tessera HTTP API. */
export {
  createTesseraClient,
  type ConditionalGet,
  type ConditionalRun,
  type ListRunsOptions,
  type ListSubtasksOptions,
  type TesseraClient,
  type TesseraClientOptions,
  type WaitOptions,
} from './client';
export { ClientError, RunWaitTimeout, TesseraApiError } from './errors';
