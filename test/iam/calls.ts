/**
 * What the integration suites recorded, joined per function: the calls a function's handler sent
 * itself, and every call sent (by any suite) by a ledger method that handler calls.
 */
import { LEDGER_FUNCTIONS, type LedgerFunction } from '../../lib/ledger/access';
import { readWireCalls, type WireCall } from '../support/wire-calls';

/** `table dynamodb:GetItem`, `runListIndex dynamodb:Query`: one grant entry. */
export type Grant = `${WireCall['resource']} ${string}`;
export const grantOf = (call: Pick<WireCall, 'resource' | 'action'>): Grant => `${call.resource} ${call.action}`;

export interface JoinedCalls {
  readonly files: readonly string[];
  readonly calls: readonly WireCall[];
  /** The ledger methods each function's handler called. */
  readonly methods: Readonly<Record<LedgerFunction, ReadonlySet<string>>>;
  /** Every call a function may make: its own, and those of the methods it calls, from any suite. */
  readonly callsOf: (fn: LedgerFunction) => readonly WireCall[];
}

export const joinedCalls = (): JoinedCalls => {
  const { files, calls } = readWireCalls();
  const methods = Object.fromEntries(
    LEDGER_FUNCTIONS.map((fn) => [fn, new Set(calls.flatMap((c) => (c.fn === fn && c.method !== undefined ? [c.method] : [])))]),
  ) as Record<LedgerFunction, Set<string>>;
  return {
    files,
    calls,
    methods,
    callsOf: (fn) => calls.filter((c) => c.fn === fn || (c.method !== undefined && methods[fn].has(c.method))),
  };
};

/**
 * The tenant whose partition a key is in: keys start `T#<percent-encoded tenant>#`.
 *
 * @example
 * tenantOfKey('T#a%23b#R#r-1') // 'a#b'
 */
export const tenantOfKey = (pk: string): string => {
  const match = /^T#([^#]*)#/.exec(pk);
  if (!match?.[1]) throw new Error(`${pk} is not a tenant key`);
  return decodeURIComponent(match[1]);
};
