import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { ErrorCode, McpError, type Result, type Task } from '@modelcontextprotocol/sdk/types.js';
import type { RunStatus } from '../contract';
import { TesseraApiError, type TesseraClient } from '../client';

/**
 * MCP tasks (the 2025-11-25 revision's experimental long-running requests) over tessera runs,
 * without keeping anything here: the run is the task. Its id is the run id, its status is read
 * from `GET /runs/{runId}` on every `tasks/get`, `tasks/cancel` is `POST /runs/{runId}/cancel`,
 * and `tasks/list` is `GET /runs`, all as the caller's tenant (the token of the API client). So
 * the same store serves `tessera mcp` on stdio and the API's stateless `/mcp`, where every
 * request has a server of its own, and another tenant's run id is "not found" here as on every
 * route.
 */

/** How long a client should wait between two `tasks/get` of a run, in milliseconds. */
export const TASK_POLL_INTERVAL_MS = 2000;

/** Tools a client may call as a task: the run they start or wait for is the task. */
export const TASK_TOOLS = ['start_run', 'wait_for_run'] as const;

/** What a run's status and answer say about its task. */
export interface RunTaskState {
  /** The MCP task status. */
  readonly status: Task['status'];
  /** What the status means for the caller, and what to call next. */
  readonly statusMessage: string;
}

/**
 * A run's task status. A run that has ended is `working` until its answer (with the coverage
 * statement the task's result leads with) is written; a cancelled run is `cancelled` at once, as
 * `tasks/cancel` must answer, and its result waits for the partial answer. A `failed` run still
 * has coverage: `tasks/result` returns its summary like any other.
 */
export const runTaskState = (status: RunStatus, answered: boolean): RunTaskState => {
  switch (status) {
    case 'running':
      return { status: 'working', statusMessage: 'running: call tasks/get again after pollInterval' };
    case 'succeeded':
      return answered
        ? { status: 'completed', statusMessage: 'succeeded: read tasks/result; coverage.complete says whether the answer is whole' }
        : { status: 'working', statusMessage: 'ended: its answer is being written' };
    case 'failed':
      return answered
        ? { status: 'failed', statusMessage: 'failed: tasks/result still gives its coverage and partial answer' }
        : { status: 'working', statusMessage: 'ended: its answer is being written' };
    case 'cancelled':
      return { status: 'cancelled', statusMessage: 'cancelled: tasks/result gives the partial answer once it is written' };
    default: {
      const unknown: never = status;
      throw new Error(`no task status for run status ${String(unknown)}`);
    }
  }
};

/** The fields of a run (or a row of `GET /runs`) its task is made of. */
interface RunTaskSource {
  readonly runId: string;
  readonly status: RunStatus;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A run as an MCP task. Runs are kept until deleted, so the task's ttl is `null` (unlimited). */
export const runTask = (run: RunTaskSource, answered: boolean): Task => ({
  taskId: run.runId,
  ...runTaskState(run.status, answered),
  ttl: null,
  createdAt: run.createdAt,
  lastUpdatedAt: run.updatedAt,
  pollInterval: TASK_POLL_INTERVAL_MS,
});

/** The run id a task-augmented tool call hands to `createTask` (in `CreateTaskOptions.context`). */
const runIdOf = (options: CreateTaskOptions): string => {
  const runId = options.context?.runId;
  if (typeof runId !== 'string') throw new McpError(ErrorCode.InternalError, 'a task is created for a run: context.runId is missing');
  return runId;
};

const missingIsNull = async <T>(read: () => Promise<T>): Promise<T | null> => {
  try {
    return await read();
  } catch (error) {
    if (error instanceof TesseraApiError && error.status === 404) return null;
    throw error;
  }
};

/**
 * The task store of one MCP server: every method reads or changes the run through the API.
 * `result` answers `tasks/result` of an ended run (the server's wait_for_run result, which waits
 * for a cancelled run's answer within its bound). Session ids are not consulted: the tenant of
 * the token is what isolates runs.
 */
export const runTaskStore = (client: TesseraClient, result: (runId: string) => Promise<Result>): TaskStore => {
  const getTask = async (taskId: string): Promise<Task | null> =>
    missingIsNull(async () => {
      // The task needs the run's status, not its subtasks: a 1,000-subtask run stays a small read.
      const read = await client.getRun(taskId, { subtasks: 'none' });
      if (!read.modified) throw new McpError(ErrorCode.InternalError, `GET /runs/${taskId} answered "not modified" to an unconditional read`);
      return runTask(read.run, read.run.answer !== null);
    });
  return {
    createTask: async (options) => {
      const task = await getTask(runIdOf(options));
      if (task === null) throw new McpError(ErrorCode.InvalidParams, `not found: no run ${runIdOf(options)} for this caller`);
      return task;
    },
    getTask,
    // Nothing runs here, so nothing is stored: the run's answer is its result.
    storeTaskResult: async (taskId) => {
      throw new McpError(ErrorCode.InternalError, `task ${taskId} is a tessera run: its result is the run's answer, never stored here`);
    },
    getTaskResult: async (taskId) => result(taskId),
    updateTaskStatus: async (taskId, status) => {
      // tasks/cancel is the only way the SDK changes a task's status without a stored result.
      if (status !== 'cancelled') throw new McpError(ErrorCode.InvalidRequest, `task ${taskId} is a tessera run: only cancelling changes its status`);
      await client.cancelRun(taskId);
    },
    listTasks: async (cursor) => {
      const page = await client.listRuns(cursor === undefined ? {} : { cursor });
      return {
        tasks: page.runs.map((run) => runTask(run, run.complete !== null)),
        ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
      };
    },
  };
};
