/**
 * The worker SDK: define worker kinds, run subtasks with scoped tools whose observations become
 * the outcome's coverage, and reach models through one metered interface.
 * See docs/workers.md for a walk-through.
 */
export { buildAssignment, parseRunnableSubtask, RunnableSubtask, type Assignment, type ScopeByDimension } from './assignment';
export {
  defineWorker,
  type SourcesOf,
  type ToolsOf,
  type WorkerContext,
  type WorkerDefinition,
  type DefinedWorker,
  type WorkerRunParts,
  type FindingItem,
} from './define';
export * from './errors';
export {
  assistantTurn,
  ConverseRequest,
  ConverseResult,
  ModelMessage,
  toolResultsTurn,
  ToolCallPart,
  ToolSpec,
  toolSpec,
  userText,
  type BudgetPort,
  type ModelAdapter,
  type ModelCallRequest,
  type ParsedConverseRequest,
  type ToolCall,
  type WorkerModel,
} from './model';
export { createBedrockAdapter, fromConverseOutput, toConverseInput, type BedrockAdapterOptions } from './models/bedrock';
export {
  createOfflineModel,
  OFFLINE_VARIANTS,
  parseOfflineModelId,
  promptJson,
  toolThenFinish,
  type OfflineModelOptions,
  type OfflineReply,
  type OfflineScript,
  type OfflineTurn,
  type OfflineVariant,
} from './models/offline';
export {
  allowedModelIds,
  createModelProvider,
  ModelEnvironment,
  parseModelConfig,
  type ModelConfig,
  type ModelProvider,
  type ModelProviderOptions,
  type ModelSelection,
} from './models/provider';
export {
  idsRecorder,
  mergeRanges,
  pathsRecorder,
  timeRecorder,
  type IdsRecorder,
  type PathsRecorder,
  type RecorderByDimension,
  type TimeRecorder,
} from './observation';
export { createRegistry, type MergedAnswer, type MergeItem, type RegistryOptions, type WorkerRegistry } from './registry';
export {
  defineSynthesizer,
  faithfulOutput,
  faithfulSynthesis,
  outputOf,
  repairRequest,
  SYNTHESIS_TASK,
  SYNTHESIS_TOOL,
  synthesisPromptJson,
  synthesisPromptOf,
  synthesisRequest,
  type SynthesisContext,
  type SynthesisPart,
  type Synthesizer,
  type SynthesizerDefinition,
} from './synthesizer';
export type { FindingClaim } from '../domain/synthesis';
export type { WorkerCatalog, WorkerKindInfo } from '../domain/catalog';
export { runSubtask, type RunSubtaskOptions } from './run-subtask';
export type { SetTimer } from './session';
export {
  fileSource,
  keyedSource,
  timeSeriesSource,
  type DataSource,
  type FileRequest,
  type FileSpec,
  type FileTool,
  type KeyedSpec,
  type KeyedTool,
  type LoadOptions,
  type SourceBatch,
  type StringKey,
  type TimeRangeRequest,
  type TimeSeriesSpec,
  type ToolBinding,
  type TimeSeriesTool,
} from './sources';
export { converseWithTools, type ToolLoopOptions, type ToolLoopResult } from './tool-loop';
export {
  loadWorkerRegistry,
  PACKAGE_JSON_FIELD,
  registryOfModule,
  resolveWorkerModule,
  workerModuleFromPackageJson,
  WORKER_MODULE_EXPORT_HINT,
} from './worker-module';
export {
  DEFAULT_CHECKPOINT_POLICY,
  HANDOVER_WRITES,
  openCheckpointer,
  type CheckpointPolicy,
  type CheckpointPort,
  type Checkpointer,
  type CheckpointerOptions,
  type CheckpointSource,
} from './checkpointer';
