/**
 * `@tessera-fanout/tessera/mcp`: tessera for agents. The MCP server (`createTesseraMcpServer`, which
 * `tessera mcp` serves on stdio and the API serves at `/mcp`), one stateless Streamable HTTP
 * request (`answerMcpRequest`), and the same tools as JSON tool definitions for frameworks that do
 * not speak MCP (`toolDefinitions`). A run is an MCP task where the client asks for one
 * (the task is the run, read through the API, nothing kept: `runTaskState` maps its status). See docs/agents.md.
 *
 * @packageDocumentation
 */
export { createTesseraMcpServer, RUN_RESOURCE_TEMPLATE, TESSERA_MCP_SERVER, type TesseraMcpOptions } from './server';
export { answerMcpRequest } from './http';
export { runTaskState, TASK_POLL_INTERVAL_MS, TASK_TOOLS, type RunTaskState } from './tasks';
export {
  GET_RUN_MAX_BYTES,
  inputJsonSchema,
  RUN_ROWS,
  SUBTASK_ROWS,
  TESSERA_TOOLS,
  toolDefinitions,
  WAIT_SECONDS,
  type TesseraTool,
  type TesseraToolName,
  type ToolArguments,
  type ToolDefinition,
} from './tools';
export {
  compactRun,
  compactSubtask,
  compactRegion,
  compactRunRow,
  jsonBytes,
  type CompactGap,
  type CompactRegion,
  type CompactRun,
  type CompactSubtask,
} from './summary';
export { withFix, type RepairableProblem, type ReportedProblem } from './fixes';
/** The contract types the summaries are written in (also exported by the package's main entry). */
export type { CoverageGap, FileScope, RunStatus } from '../contract';
