/**
 * `@tessera-fanout/tessera/cdk`: the whole fan-out as one CDK construct, and the types of its props.
 * Needs `aws-cdk-lib` and `constructs` (peer dependencies) in the project that uses it.
 *
 * @example
 * import { TesseraFanOut } from '@tessera-fanout/tessera/cdk';
 * new TesseraFanOut(stack, 'FanOut', { auth: { issuer, audiences: [clientId] } });
 *
 * @packageDocumentation
 */
export { TesseraFanOut, type FanOutFunctions, type ModelConfig, type TenantDailyAllowance, type TesseraFanOutProps, type WorkerModuleProps } from './fan-out';
export type { ApiThrottle, JwtAuthConfig } from './runs-api';
export { RunsApi, type RunsApiProps } from './runs-api';
export { FanOutMonitoring, type FanOutMonitoringProps } from './fan-out-monitoring';
export { TesseraFunction, type TesseraFunctionProps } from './tessera-function';
export type { FanOutSettings } from './fan-out-settings';
export type { WorkerKindSettings } from './defaults';
export type { TenantScopedFunction } from '../ledger/access';
export { RunClosure, type RunClosureProps } from './run-closure';
export type { RunMetricName } from './run-metrics';
export { METRICS, METRIC_DIMENSIONS } from '../observability/metrics';
export type { RunStatus, TerminalState } from '../contract';
export { UNFINISHED_EXECUTION_STATUSES, type UnfinishedExecutionStatus } from '../orchestration/execution-events';
