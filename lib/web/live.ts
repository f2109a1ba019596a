import type { RunResource } from '../contract';

/**
 * Follows one run through `GET /runs/{runId}` until it has ended.
 *
 * Once the API has sent an `ETag`, each request sends it as `If-None-Match` and asks
 * `Prefer: wait=N`: an API that long-polls holds the request until the run changes (or N seconds
 * pass) and answers 304 when nothing changed. An API without ETags answers 200 every time, and
 * the watcher waits `intervalMs` between requests. Either way `onRun` is called only when the
 * body changed.
 */

/** Where a token comes from: called before every request, so it can refresh one that expires. */
export type TokenSource = () => string | Promise<string>;

/** A request that did not return the run. `status` is the HTTP status, 0 when none came back. */
export interface WatchError {
  readonly status: number;
  readonly message: string;
  /** True when asking again will not help (401, 403, 404): the watcher has stopped. */
  readonly final: boolean;
}

export interface WatchOptions {
  readonly apiUrl: string;
  readonly runId: string;
  readonly tokenSource: TokenSource;
  readonly onRun: (run: RunResource) => void;
  readonly onError?: (error: WatchError) => void;
  /** How long the API may hold a request (`Prefer: wait=N`), in seconds. Default 20. */
  readonly waitSeconds?: number;
  /** The least time between two requests, in milliseconds. Default 1000. */
  readonly intervalMs?: number;
  readonly fetch?: typeof fetch;
}

export interface Watch {
  /** Stops asking; a request in flight is aborted. */
  stop(): void;
  /** Resolves when the watcher stops: the run ended, a final error, or `stop()`. */
  readonly done: Promise<void>;
}

/** How long the watcher asks the API to hold a request: the most `GET /runs/{runId}` honours. */
export const DEFAULT_WAIT_SECONDS = 20;

/** A run has ended when its status is no longer `running` and its answer (with coverage) is written. */
export const hasEnded = (run: RunResource): boolean => run.status !== 'running' && run.answer !== null;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Starts following a run.
 *
 * @example
 * const watch = watchRun({ apiUrl, runId, tokenSource: async () => token, onRun: (run) => draw(run) });
 * watch.stop();
 */
export const watchRun = (options: WatchOptions): Watch => {
  const controller = new AbortController();
  const { signal } = controller;
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const waitSeconds = options.waitSeconds ?? DEFAULT_WAIT_SECONDS;
  const intervalMs = options.intervalMs ?? 1000;
  const url = `${options.apiUrl.replace(/\/$/, '')}/runs/${encodeURIComponent(options.runId)}`;

  const loop = async (): Promise<void> => {
    let etag: string | undefined;
    let lastBody: string | undefined;
    let failures = 0;
    while (!signal.aborted) {
      const started = Date.now();
      let ended = false;
      try {
        const token = await options.tokenSource();
        // The conditional headers go only to an API that sent an ETag: a cross-origin API must
        // allow them in its CORS preflight, and one without ETags need not.
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (etag) Object.assign(headers, { 'if-none-match': etag, prefer: `wait=${waitSeconds}` });
        const response = await doFetch(url, { headers, signal, cache: 'no-store' });
        if (response.status === 304) {
          failures = 0;
        } else if (response.ok) {
          failures = 0;
          etag = response.headers.get('etag') ?? undefined;
          const body = await response.text();
          if (body !== lastBody) {
            lastBody = body;
            const run = JSON.parse(body) as RunResource;
            options.onRun(run);
            ended = hasEnded(run);
          }
        } else {
          const final = response.status === 401 || response.status === 403 || response.status === 404;
          options.onError?.({ status: response.status, message: `GET /runs/${options.runId} answered ${response.status}`, final });
          if (final) return;
          failures += 1;
        }
      } catch (error) {
        if (signal.aborted) return;
        failures += 1;
        options.onError?.({ status: 0, message: `GET /runs/${options.runId} failed: ${(error as Error).message}`, final: false });
      }
      if (ended) return;
      // Back off after failures (up to 30 s); never ask more often than intervalMs.
      const pause = failures > 0 ? Math.min(30_000, intervalMs * 2 ** failures) : intervalMs - (Date.now() - started);
      if (pause > 0) await sleep(pause, signal);
    }
  };
  return { stop: () => controller.abort(), done: loop() };
};
