import {
  ErrorBody,
  MAX_WAIT_SECONDS,
  RunAccepted,
  RunList,
  RunResource,
  SubtaskList,
  type RunRequestInput,
  type RunStatus,
  type RunSubtasksForm,
  type RunSummary,
  type SubtaskView,
} from '../contract';
import { RunWaitTimeout, TesseraApiError } from './errors';

export interface TesseraClientOptions {
  /** Base URL of the API: the stack's `ApiUrl` output, or the local cloud's. */
  readonly apiUrl: string;
  /** A JWT the API's authorizer accepts (its tenant claim decides whose runs you see). */
  readonly token: string;
  readonly fetch?: typeof fetch;
  /**
   * Pauses before each retry of a read (GET) the API answered 429, 502, 503 or 504: throttled, or
   * a gateway or function that timed out under load. Reads change nothing, so a retry is safe;
   * writes (`POST`) are never retried here. `[]` turns retrying off.
   * @default [500, 1000, 2000]
   */
  readonly readRetryDelaysMs?: readonly number[];
}

/** Statuses a read is retried on: the request may succeed if simply sent again a moment later. */
const RETRIED_READ_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);
const DEFAULT_READ_RETRY_DELAYS_MS = [500, 1000, 2000] as const;

export interface WaitOptions {
  /** Called with the run resource each time it changes (and once at the start), for progress displays. */
  readonly onProgress?: (run: RunResource) => void;
  /**
   * Pause between reads when the API does not hold requests (an API without ETags), and while an
   * ended run's answer is still being written.
   * @default 500
   */
  readonly intervalMs?: number;
  /** @default 600_000 */
  readonly timeoutMs?: number;
}

/** What `listRuns` asks for; every field optional (the API's defaults: all statuses, 20 per page). */
export interface ListRunsOptions {
  readonly status?: RunStatus;
  readonly limit?: number;
  readonly cursor?: string;
}

/** What `listSubtasks` asks for; every field optional (the API's default: 100 per page). */
export interface ListSubtasksOptions {
  readonly limit?: number;
  readonly cursor?: string;
}

/** What a conditional `getRun` asks for. */
export interface ConditionalGet {
  /**
   * `page`: the first page of subtasks and `subtasksPage`; `none`: no subtasks (counts, coverage,
   * answer), for a frontend polling a large run. Without it, the API's default form.
   */
  readonly subtasks?: RunSubtasksForm;
  /** An ETag from an earlier read: the API answers "not modified" while the run still matches it. */
  readonly ifNoneMatch?: string;
  /** Hold the request up to this many seconds (1 to 20) while the run still matches `ifNoneMatch`. */
  readonly waitSeconds?: number;
}

/** The answer of a conditional `getRun`: the run with its tag, or "not modified" with the current tag. */
export type ConditionalRun =
  { readonly modified: true; readonly run: RunResource; readonly etag: string | undefined } | { readonly modified: false; readonly etag: string };

/** How long `waitForRun` waits for the answer of a run that has already ended. */
const ANSWER_GRACE_MS = 30_000;

const parseBody = async (response: Response): Promise<unknown> => {
  const text = await response.text();
  try {
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return { message: text.slice(0, 200) };
  }
};

/**
 * A small typed client of the tessera HTTP API, for product frontends, the CLI and the
 * end-to-end tests alike. Every answer is validated against the contract schemas.
 *
 * @example
 * const tessera = createTesseraClient({ apiUrl, token });
 * const { runId } = await tessera.createRun(request, { idempotencyKey: 'order-42' });
 * const run = await tessera.waitForRun(runId, { onProgress: (r) => console.log(r.progress) });
 * console.log(run.answer?.coverage.statement);
 */
export const createTesseraClient = (options: TesseraClientOptions) => {
  const retryDelays = (method: string): readonly number[] => (method === 'GET' ? (options.readRetryDelaysMs ?? DEFAULT_READ_RETRY_DELAYS_MS) : []);
  const send = async (operation: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const request = () =>
      (options.fetch ?? fetch)(`${options.apiUrl.replace(/\/$/, '')}${path}`, {
        method,
        headers: { authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
    let response = await request();
    for (const delay of retryDelays(method)) {
      if (!RETRIED_READ_STATUSES.has(response.status)) break;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, delay));
      response = await request();
    }
    if (response.status === 304) return { response, parsed: undefined };
    const parsed = await parseBody(response);
    if (!response.ok) {
      const error = ErrorBody.safeParse(parsed);
      throw new TesseraApiError(response.status, error.success ? error.data : (parsed as { message?: string } | undefined), operation);
    }
    return { response, parsed };
  };
  const call = async (operation: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    (await send(operation, method, path, body, headers)).parsed;

  const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

  /** `GET /runs/{runId}` with `If-None-Match` and `Prefer: wait=N`. */
  const getRunIfChanged = async (runId: string, conditions: ConditionalGet): Promise<ConditionalRun> => {
    const headers: Record<string, string> = {
      ...(conditions.ifNoneMatch === undefined ? {} : { 'if-none-match': conditions.ifNoneMatch }),
      ...(conditions.waitSeconds === undefined ? {} : { prefer: `wait=${conditions.waitSeconds}` }),
    };
    const suffix = conditions.subtasks === undefined ? '' : `?subtasks=${conditions.subtasks}`;
    const { response, parsed } = await send('GET /runs/{runId}', 'GET', `${runPath(runId)}${suffix}`, undefined, headers);
    const etag = response.headers.get('etag') ?? undefined;
    if (response.status === 304) return { modified: false, etag: etag ?? conditions.ifNoneMatch ?? '' };
    return { modified: true, run: RunResource.parse(parsed), etag };
  };

  /** `GET /runs/{runId}`; with conditions, a conditional (and possibly waiting) read. */
  function getRun(runId: string): Promise<RunResource>;
  function getRun(runId: string, conditions: ConditionalGet): Promise<ConditionalRun>;
  async function getRun(runId: string, conditions?: ConditionalGet): Promise<RunResource | ConditionalRun> {
    if (conditions !== undefined) return getRunIfChanged(runId, conditions);
    return RunResource.parse(await call('GET /runs/{runId}', 'GET', runPath(runId)));
  }

  /** `GET /runs`: one page of the tenant's runs, newest first. */
  const listRuns = async (list: ListRunsOptions = {}): Promise<RunList> => {
    const query = new URLSearchParams();
    if (list.status !== undefined) query.set('status', list.status);
    if (list.limit !== undefined) query.set('limit', String(list.limit));
    if (list.cursor !== undefined) query.set('cursor', list.cursor);
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    return RunList.parse(await call('GET /runs', 'GET', `/runs${suffix}`));
  };

  /**
   * Every run of the tenant (or of one status), newest first, following `nextCursor` page by page.
   *
   * @example
   * for await (const run of tessera.allRuns({ status: 'running' })) console.log(run.runId);
   */
  async function* allRuns(list: Omit<ListRunsOptions, 'cursor'> = {}): AsyncGenerator<RunSummary, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await listRuns({ ...list, ...(cursor === undefined ? {} : { cursor }) });
      yield* page.runs;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  /** `GET /runs/{runId}/subtasks`: one page of a run's subtasks, in id order. */
  const listSubtasks = async (runId: string, list: ListSubtasksOptions = {}): Promise<SubtaskList> => {
    const query = new URLSearchParams();
    if (list.limit !== undefined) query.set('limit', String(list.limit));
    if (list.cursor !== undefined) query.set('cursor', list.cursor);
    const suffix = query.size > 0 ? `?${query.toString()}` : '';
    return SubtaskList.parse(await call('GET /runs/{runId}/subtasks', 'GET', `${runPath(runId)}/subtasks${suffix}`));
  };

  /**
   * Every subtask of a run, in id order, following `nextCursor` page by page.
   *
   * @example
   * for await (const subtask of tessera.allSubtasks(runId)) console.log(subtask.id, subtask.state);
   */
  async function* allSubtasks(runId: string, list: Omit<ListSubtasksOptions, 'cursor'> = {}): AsyncGenerator<SubtaskView, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await listSubtasks(runId, { ...list, ...(cursor === undefined ? {} : { cursor }) });
      yield* page.subtasks;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
  }

  return {
    /** `POST /runs`. A body given as a string is sent as it is (to test the API's own parsing). */
    async createRun(request: RunRequestInput | string, options: { idempotencyKey?: string } = {}): Promise<RunAccepted> {
      const headers: Record<string, string> = options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {};
      return RunAccepted.parse(await call('POST /runs', 'POST', '/runs', request, headers));
    },
    getRun,
    listRuns,
    allRuns,
    listSubtasks,
    allSubtasks,
    /** `POST /runs/{runId}/cancel`: finished outcomes stay, the rest become `cancelled`. */
    async cancelRun(runId: string): Promise<RunResource> {
      return RunResource.parse(await call('POST /runs/{runId}/cancel', 'POST', `/runs/${encodeURIComponent(runId)}/cancel`));
    },
    /**
     * Waits until the run has ended and its answer is written, with long-polls: each request
     * carries the last ETag and `Prefer: wait=20`, so the API answers as soon as the run changes
     * (and `onProgress` sees each change) and an unchanged run is never downloaded again. A
     * cancelled run shows `cancelled` at once; its answer (with coverage) follows when the state
     * machine has wound down.
     */
    async waitForRun(runId: string, wait: WaitOptions = {}): Promise<RunResource> {
      const started = Date.now();
      const timeoutMs = wait.timeoutMs ?? 600_000;
      const pause = () => new Promise((resolve) => setTimeout(resolve, wait.intervalMs ?? 500));
      let endedAt: number | undefined;
      let last: RunResource | undefined;
      let etag: string | undefined;
      for (;;) {
        const left = timeoutMs - (Date.now() - started);
        const waitSeconds = Math.max(1, Math.min(MAX_WAIT_SECONDS, Math.floor(left / 1000)));
        const read = await getRunIfChanged(runId, etag === undefined ? {} : { ifNoneMatch: etag, waitSeconds });
        if (read.modified) {
          last = read.run;
          wait.onProgress?.(read.run);
        }
        etag = read.etag;
        const run = last as RunResource;
        if (run.status !== 'running') endedAt ??= Date.now();
        // An ended run's answer normally follows within a second or two; never wait on it forever.
        if (endedAt !== undefined && (run.answer !== null || Date.now() - endedAt > ANSWER_GRACE_MS)) return run;
        if (Date.now() - started > timeoutMs) throw new RunWaitTimeout(runId, Date.now() - started);
        // Without a tag the API cannot hold the request, and an ended run's answer is written
        // without a further state change the wait could see: pause between those reads.
        if (etag === undefined || endedAt !== undefined) await pause();
      }
    },
  };
};
export type TesseraClient = ReturnType<typeof createTesseraClient>;
