import { DeadlineExceeded, SubtaskCancelled } from './errors';

/**
 * The stop switch of one running subtask. Two levels, because they mean different things:
 * - `stop` ends the worker's access to its tools and model (`ctx.signal` fires) but lets `run`
 *   return what it has: the SDK uses it when the allowance is exhausted;
 * - `halt` also stops waiting for `run`: the absolute deadline, a cancellation from outside, or
 *   an infrastructure error (a lost lease) halt the subtask.
 * The first reason of each level wins.
 *
 * @example
 * const session = openSession({ deadlineMs, deadline, now: Date.now });
 * session.stop(exhausted); // tools and model stop; run may still return
 */
export interface Session {
  /** The worker's signal: fires on a stop or a halt. */
  readonly signal: AbortSignal;
  /** Fires only on a halt. */
  readonly halted: AbortSignal;
  /** Milliseconds left before the absolute deadline; never negative. */
  remainingMs(): number;
  /** Stops tools and model calls; `run` may still return. */
  stop(reason: Error): void;
  /** Stops tools and model calls and stops waiting for `run`. */
  halt(reason: Error): void;
  /** Why the worker's signal fired, or `undefined`. */
  readonly reason: Error | undefined;
  /** Why the subtask was halted, or `undefined`. */
  readonly haltReason: Error | undefined;
  /**
   * Starts `work` unless the session has stopped, then settles with it or rejects with the stop
   * reason as soon as the session stops, whichever comes first. A tool call wrapped in it cannot
   * outlive the deadline even when the source behind it ignores the signal.
   */
  guard<T>(work: () => Promise<T>): Promise<T>;
  /** Throws the stop reason if the session has stopped. Called before starting anything new. */
  throwIfStopped(): void;
  /** Releases the deadline timer and the listener on the outside signal. */
  close(): void;
}

/**
 * @example
 * openSession({ deadlineMs: Date.parse(deadline), deadline, now: Date.now, outside: cancellation.signal });
 */
export interface SessionOptions {
  /** Absolute deadline in epoch milliseconds. */
  readonly deadlineMs: number;
  /** The deadline as written in the assignment, for the stop reason. */
  readonly deadline: string;
  readonly now: () => number;
  /** Starts the deadline timer on the clock of `now`. @default setTimeout */
  readonly setTimer?: SetTimer | undefined;
  /** Cancellation from outside the SDK (the run was cancelled). */
  readonly outside?: AbortSignal | undefined;
}

/**
 * Calls `callback` once `delayMs` have passed on some clock, and returns what cancels it. The
 * default is the real clock (`setTimeout`); a test clock fires its timers when it is advanced.
 *
 * @example
 * const setTimer: SetTimer = (callback, delayMs) => { const t = setTimeout(callback, delayMs); return () => clearTimeout(t); };
 */
export type SetTimer = (callback: () => void, delayMs: number) => () => void;

/** setTimeout takes a signed 32-bit delay; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Settles with `work`, or rejects with `signal.reason` as soon as `signal` aborts.
 *
 * @example
 * await raceAbort(session.halted, kind.execute(parts)); // returns at the deadline even if run hangs
 */
export const raceAbort = <T>(signal: AbortSignal, work: Promise<T>): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    // Both branches settle the outer promise and detach the listener, so an abandoned `work`
    // never surfaces as an unhandled rejection after the race is decided.
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });

const realTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  return () => clearTimeout(timer);
};

const reasonOf = (signal: AbortSignal): Error | undefined => (signal.aborted ? (signal.reason as Error) : undefined);

/**
 * Opens a session whose signal fires at the absolute deadline or on outside cancellation.
 *
 * @example
 * const session = openSession({ deadlineMs: Date.parse(deadline), deadline, now: Date.now });
 * try { await session.guard(() => source.load(range, { signal: session.signal })); } finally { session.close(); }
 */
export const openSession = (options: SessionOptions): Session => {
  const worker = new AbortController();
  const halting = new AbortController();
  const stop = (reason: Error): void => {
    if (!worker.signal.aborted) worker.abort(reason);
  };
  const halt = (reason: Error): void => {
    stop(reason);
    if (!halting.signal.aborted) halting.abort(reason);
  };
  const onOutsideAbort = (): void => halt(new SubtaskCancelled({ cause: options.outside?.reason }));
  const delay = Math.min(MAX_TIMER_MS, Math.max(0, options.deadlineMs - options.now()));
  const fire = (): void => halt(new DeadlineExceeded(options.deadline));
  const cancelTimer = options.setTimer === undefined ? realTimer(fire, delay) : options.setTimer(fire, delay);
  if (options.outside?.aborted) onOutsideAbort();
  options.outside?.addEventListener('abort', onOutsideAbort, { once: true });

  return {
    signal: worker.signal,
    halted: halting.signal,
    remainingMs: () => Math.max(0, options.deadlineMs - options.now()),
    stop,
    halt,
    get reason() {
      return reasonOf(worker.signal);
    },
    get haltReason() {
      return reasonOf(halting.signal);
    },
    guard: (work) => {
      const reason = reasonOf(worker.signal);
      if (reason) return Promise.reject(reason);
      try {
        return raceAbort(worker.signal, work());
      } catch (error) {
        return Promise.reject(error);
      }
    },
    throwIfStopped: () => {
      const reason = reasonOf(worker.signal);
      if (reason) throw reason;
    },
    close: () => {
      cancelTimer();
      options.outside?.removeEventListener('abort', onOutsideAbort);
    },
  };
};
