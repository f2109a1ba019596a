import { ErrorBody, RunAccepted, RunResource, type RunRequestInput } from '../contract';
import { RunWaitTimeout, TesseraApiError } from './errors';

export interface TesseraClientOptions {
  /** Base URL of the API: the stack's `ApiUrl` output, or the local cloud's. */
  readonly apiUrl: string;
  /** A JWT the API's authorizer accepts (its tenant claim decides whose runs you see). */
  readonly token: string;
  readonly fetch?: typeof fetch;
}

export interface WaitOptions {
  /** Called with every poll's run resource, for progress displays. */
  readonly onProgress?: (run: RunResource) => void;
  /** @default 500 */
  readonly intervalMs?: number;
  /** @default 600_000 */
  readonly timeoutMs?: number;
}

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
  const call = async (operation: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await (options.fetch ?? fetch)(`${options.apiUrl.replace(/\/$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const parsed = await parseBody(response);
    if (!response.ok) {
      const error = ErrorBody.safeParse(parsed);
      throw new TesseraApiError(response.status, error.success ? error.data : (parsed as { message?: string } | undefined), operation);
    }
    return parsed;
  };

  const getRun = async (runId: string): Promise<RunResource> =>
    RunResource.parse(await call('GET /runs/{runId}', 'GET', `/runs/${encodeURIComponent(runId)}`));

  return {
    /** `POST /runs`. A body given as a string is sent as it is (to test the API's own parsing). */
    async createRun(request: RunRequestInput | string, options: { idempotencyKey?: string } = {}): Promise<RunAccepted> {
      const headers: Record<string, string> = options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {};
      return RunAccepted.parse(await call('POST /runs', 'POST', '/runs', request, headers));
    },
    getRun,
    /** `POST /runs/{runId}/cancel`: finished outcomes stay, the rest become `cancelled`. */
    async cancelRun(runId: string): Promise<RunResource> {
      return RunResource.parse(await call('POST /runs/{runId}/cancel', 'POST', `/runs/${encodeURIComponent(runId)}/cancel`));
    },
    /**
     * Polls until the run has ended and its answer is written. A cancelled run shows `cancelled`
     * at once; its answer (with coverage) follows when the state machine has wound down.
     */
    async waitForRun(runId: string, wait: WaitOptions = {}): Promise<RunResource> {
      const started = Date.now();
      const timeoutMs = wait.timeoutMs ?? 600_000;
      let endedAt: number | undefined;
      for (;;) {
        const run = await getRun(runId);
        wait.onProgress?.(run);
        if (run.status !== 'running') endedAt ??= Date.now();
        // An ended run's answer normally follows within a second or two; never wait on it forever.
        if (endedAt !== undefined && (run.answer !== null || Date.now() - endedAt > ANSWER_GRACE_MS)) return run;
        if (Date.now() - started > timeoutMs) throw new RunWaitTimeout(runId, Date.now() - started);
        await new Promise((resolve) => setTimeout(resolve, wait.intervalMs ?? 500));
      }
    },
  };
};
export type TesseraClient = ReturnType<typeof createTesseraClient>;
