/** One line of the local cloud's own log: which component, how serious, what happened. */
export interface LocalLogEntry {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  /** `lambda`, `states`, `esm`, `http-api`, `cloud`, … */
  readonly component: string;
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>>;
}

/**
 * Where the harness reports what it does. It prints nothing unless given one, because the local
 * cloud runs inside tests and inside `tessera run`, whose output belongs to the caller.
 *
 * @example
 * const log: LocalLog = (entry) => { if (entry.level !== 'debug') console.error(`[${entry.component}] ${entry.message}`); };
 */
export type LocalLog = (entry: LocalLogEntry) => void;

/**
 * The default: discard everything.
 *
 * @example
 * const log = options.log ?? silentLog;
 */
export const silentLog: LocalLog = () => undefined;
