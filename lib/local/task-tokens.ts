import { randomBytes } from 'node:crypto';
import { StatesApiError, TaskFailure } from './errors';

/**
 * Task tokens for the callback pattern (`.waitForTaskToken`), which aws-local-stepfunctions does
 * not have. A waiting Task opens a token; SendTaskSuccess/SendTaskFailure settle it; a token whose
 * Task timed out, failed, or whose execution ended answers `TaskTimedOut`, as AWS does.
 */

const TOKEN_PREFIX = 'tessera-local-';
/** AWS accepts task tokens of up to 2,048 characters. */
const MAX_TOKEN_LENGTH = 2048;

/** Who waits on a token; shown in errors and logs. */
export interface TokenOwner {
  readonly executionArn: string;
  readonly stateName: string;
}

interface TokenEntry {
  readonly owner: TokenOwner;
  state: 'waiting' | 'closed';
  closedBecause?: string;
  timer?: NodeJS.Timeout;
  resolve?: (output: unknown) => void;
  reject?: (error: Error) => void;
}

/** The task tokens of one local Step Functions service. */
export interface TaskTokenRegistry {
  /**
   * Registers a waiting Task. `settled` resolves with the output of SendTaskSuccess or rejects with
   * the error of SendTaskFailure. After `timeoutMs` the token closes (the state machine raises
   * `States.Timeout` itself) and later results get `TaskTimedOut`.
   */
  open(owner: TokenOwner, timeoutMs: number): { token: string; settled: Promise<unknown> };
  succeed(token: string, output: string): void;
  fail(token: string, error?: string, cause?: string): void;
  heartbeat(token: string): void;
  /** The Task ended another way (its Lambda failed); the token stops accepting results. */
  close(token: string, because: string): void;
  /** The execution ended; all its tokens stop accepting results. */
  closeExecution(executionArn: string): void;
  /** How many tokens are waiting now. */
  waiting(): number;
}

/**
 * A registry of task tokens for one local Step Functions service.
 *
 * @example
 * const tokens = createTaskTokens();
 * const { token, settled } = tokens.open({ executionArn, stateName: 'Await' }, 30_000);
 * tokens.succeed(token, '{"state":"ok"}');
 * await settled; // { state: 'ok' }
 */
export const createTaskTokens = (): TaskTokenRegistry => {
  const entries = new Map<string, TokenEntry>();

  const closeEntry = (entry: TokenEntry, because: string): void => {
    clearTimeout(entry.timer);
    entry.state = 'closed';
    entry.closedBecause = because;
    delete entry.resolve;
    delete entry.reject;
  };

  /**
   * Closes a token whose Task ended another way, and fails its waiting promise: the library keeps
   * a Task's timeout timer until the Task's promise settles, so a promise left pending would hold
   * the process open for the rest of the Task's timeout (up to the run's deadline) after its
   * execution was stopped. Nothing may be waiting on it any more (its Lambda failed, or its
   * execution ended), so the failure is only observed, never reported.
   */
  const abandon = (entry: TokenEntry, because: string): void => {
    const { reject } = entry;
    closeEntry(entry, because);
    reject?.(new TaskFailure('States.Runtime', `the task token was closed: ${because}`));
  };

  /** Settling hands the result to the waiting Task and closes the token: a second result is late. */
  const waitingEntry = (token: string): TokenEntry & Required<Pick<TokenEntry, 'resolve' | 'reject'>> => {
    if (!token.startsWith(TOKEN_PREFIX) || token.length > MAX_TOKEN_LENGTH)
      throw new StatesApiError('InvalidToken', 'Invalid Token: the task token is malformed');
    const entry = entries.get(token);
    if (!entry) throw new StatesApiError('TaskDoesNotExist', 'Task does not exist: no task was given this token');
    if (entry.state !== 'waiting' || !entry.resolve || !entry.reject) {
      throw new StatesApiError(
        'TaskTimedOut',
        `Task Timed Out: provided task does not exist anymore (${entry.owner.stateName}: ${entry.closedBecause ?? 'closed'})`,
      );
    }
    return entry as TokenEntry & Required<Pick<TokenEntry, 'resolve' | 'reject'>>;
  };

  return {
    open: (owner, timeoutMs) => {
      const token = `${TOKEN_PREFIX}${randomBytes(48).toString('base64url')}`;
      const entry: TokenEntry = { owner, state: 'waiting' };
      const settled = new Promise<unknown>((resolve, reject) => {
        entry.resolve = resolve;
        entry.reject = reject;
      });
      // A token abandoned before its Task awaited it (its Lambda could not be invoked) must not end the process.
      settled.catch(() => undefined);
      entry.timer = setTimeout(() => closeEntry(entry, 'the task timed out'), timeoutMs);
      entries.set(token, entry);
      return { token, settled };
    },
    succeed: (token, output) => {
      const entry = waitingEntry(token);
      let value: unknown;
      try {
        value = JSON.parse(output);
      } catch (error) {
        throw new StatesApiError('InvalidOutput', `Invalid Output: the output is not valid JSON: ${(error as Error).message}`);
      }
      const { resolve } = entry;
      closeEntry(entry, 'SendTaskSuccess was received');
      resolve(value);
    },
    fail: (token, error, cause) => {
      const entry = waitingEntry(token);
      const { reject } = entry;
      closeEntry(entry, 'SendTaskFailure was received');
      reject(new TaskFailure(error ?? '', cause ?? ''));
    },
    heartbeat: (token) => void waitingEntry(token),
    close: (token, because) => {
      const entry = entries.get(token);
      if (entry?.state === 'waiting') abandon(entry, because);
    },
    closeExecution: (executionArn) => {
      for (const entry of entries.values()) {
        if (entry.owner.executionArn === executionArn && entry.state === 'waiting') abandon(entry, 'the execution ended');
      }
    },
    waiting: () => [...entries.values()].filter((entry) => entry.state === 'waiting').length,
  };
};
