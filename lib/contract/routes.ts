import { RunListQuery } from './run-list';
import { RunQuery, SubtaskListQuery } from './subtask-list';

/**
 * The path of the MCP endpoint (Streamable HTTP, stateless): the API construct routes `POST` and
 * `GET` of it to the api function behind the same JWT authorizer, and the function answers it.
 */
export const MCP_PATH = '/mcp';

/**
 * The query parameters each route of the API takes, by API Gateway's route key. Every route
 * handles the query one way: a parameter not listed for it is answered `400 InvalidQuery` naming
 * it, so a misspelt `?limt=5` is never silently ignored.
 */
export const ROUTE_QUERY_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  'POST /runs': [],
  'GET /runs': Object.keys(RunListQuery.shape),
  'GET /runs/{runId}': Object.keys(RunQuery.shape),
  'GET /runs/{runId}/subtasks': Object.keys(SubtaskListQuery.shape),
  'POST /runs/{runId}/cancel': [],
  [`POST ${MCP_PATH}`]: [],
  [`GET ${MCP_PATH}`]: [],
};
