/**
 * Shared setup of the handler tests, one module per thing it supports:
 * - `pipeline.ts`: the five handlers built with `createHandler(deps)` over real data planes (this
 *   file's own DynamoDB Local table and fauxqs queues, the reference registry, the offline model),
 *   the clock the test moves by hand, and the one test double, `recordingExecutions`, standing in
 *   for Step Functions (the e2e suite runs the real state machine);
 * - `requests.ts`: the run requests the tests send;
 * - `api-events.ts`: API Gateway's events for the api handler and its parsed answers;
 * - `sqs.ts`: queue messages turned into the worker's SQS records.
 */
export {
  at,
  dispatchRound,
  itemsOfTenant,
  pipeline,
  recordingExecutions,
  T0,
  type DispatchOutput,
  type ExecutionCalls,
  type Kind,
  type ManualClock,
  type Pipeline,
} from './pipeline';
export { halfYearRequest, secondQuarterRequest, staggeredDeadlineRequest } from './requests';
export { acceptedForDispatch, acceptRun, answerOf, apiEvent, callApi, errorOf, tokenWith, type ApiAnswer, type ApiCall } from './api-events';
export { deliver, deliverRun, messagesOfRun, receiveAll, sendRaw, sqsRecord, subtaskOf } from './sqs';
