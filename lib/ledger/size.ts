import type { Outcome } from '../contract';

/**
 * Item sizes as DynamoDB counts them, and the bounds the ledger puts on what it stores.
 *
 * DynamoDB caps an item at 400 KB and bills writes per started 1 KB, so the size of what a
 * worker hands back is a correctness and a cost concern. The rules below follow the DynamoDB
 * developer guide ("Item sizes and formats"): names and strings count their UTF-8 bytes, a
 * number about one byte per two significant digits plus one, booleans and nulls one byte, and a
 * list or map three bytes plus one byte per element.
 */

const utf8 = (text: string): number => Buffer.byteLength(text, 'utf8');

const numberSize = (value: number): number => {
  const digits = Math.abs(value).toExponential().split('e')[0]!.replace('.', '').replace(/0+$/, '');
  return Math.ceil(Math.max(digits.length, 1) / 2) + 1;
};

/**
 * Approximate stored size in bytes of one attribute value.
 *
 * @example
 * valueSize('héllo') // 6
 * valueSize([1, 'ab']) // 3 + (2 + 1) + (2 + 1) = 9
 */
export const valueSize = (value: unknown): number => {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number') return numberSize(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce<number>((sum, member) => sum + valueSize(member), 0);
  if (Array.isArray(value)) return value.reduce<number>((sum, member) => sum + valueSize(member) + 1, 3);
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .reduce((sum, [name, member]) => sum + utf8(name) + valueSize(member) + 1, 3);
  }
  return utf8(String(value));
};

/**
 * Approximate stored size in bytes of a whole item: each attribute's name plus its value.
 *
 * @example
 * itemSize({ pk: 'T#a#R#r', sk: 'RUN' }) // 2 + 7 + 2 + 3 = 14
 */
export const itemSize = (item: Record<string, unknown>): number =>
  Object.entries(item)
    .filter(([, value]) => value !== undefined)
    .reduce((sum, [name, value]) => sum + utf8(name) + valueSize(value), 0);

/** DynamoDB's hard limit on one item. */
export const ITEM_LIMIT_BYTES = 400 * 1024;
/** Serialized findings above this are not stored; the outcome is recorded `invalid` instead. */
export const FINDINGS_LIMIT_BYTES = 64 * 1024;
/**
 * The whole recorded outcome (observed coverage, sources, refusals, findings) must fit here. An
 * outcome over 16 KiB is stored in parts written in the outcome's own transaction (4 MB), so the
 * bound is that transaction with room to spare: 3 MiB holds the observed ids of a subtask
 * assigned the whole of the largest universe a request may carry (2 MiB of JSON).
 */
export const OUTCOME_LIMIT_BYTES = 3 * 1024 * 1024;
/**
 * Largest answer `finishRun` stores. An answer over 16 KiB is stored in parts beside the run item,
 * written in the same transaction (4 MB), so the bound is that transaction's size with room to spare.
 */
export const ANSWER_LIMIT_BYTES = 3 * 1024 * 1024;

/**
 * Largest run request the ledger accepts, as JSON: 2 MiB, about 100,000 ids of up to 18
 * characters. The bound comes from the two payload limits a run's data crosses whole: the
 * request goes through Lambda's 6 MB invocation payload once, and `GET /runs/{runId}` returns
 * the universe, every assigned scope and every observed block in one 6 MB Lambda response, about
 * three times the request for a run of one round.
 */
export const MAX_RUN_REQUEST_BYTES = 2 * 1024 * 1024;

/** How big a request is, and which field holds most of it. */
export interface RequestSize {
  readonly bytes: number;
  /** Dotted path of the largest field: `universe.ids`, `subtasks`, `goal`. */
  readonly field: string;
  readonly fieldBytes: number;
}

/**
 * Measures a run request as JSON and names its largest field (the universe's fields count one
 * by one, since the universe is where ids and files are listed).
 *
 * @example
 * requestSize({ goal: 'g', universe: { dimension: 'ids', ids: ['a', 'b'] }, … }).field // 'universe.ids'
 */
export const requestSize = (request: Readonly<Record<string, unknown>>): RequestSize => {
  const json = (value: unknown): number => utf8(JSON.stringify(value) ?? '');
  const fields: Array<[string, unknown]> = Object.entries(request).flatMap(([name, value]): Array<[string, unknown]> =>
    name === 'universe' && typeof value === 'object' && value !== null
      ? Object.entries(value).map(([inner, member]) => [`universe.${inner}`, member])
      : [[name, value]],
  );
  const largest = fields
    .map(([field, value]) => ({ field, fieldBytes: json(value) }))
    .reduce((a, b) => (b.fieldBytes > a.fieldBytes ? b : a), { field: 'goal', fieldBytes: 0 });
  return { bytes: json(request), ...largest };
};

const REASON_LIMIT = 500;

/**
 * Shortens a reason to the contract's 500 characters, marking the cut.
 *
 * @example
 * clipReason('x'.repeat(600)).length // 500
 */
export const clipReason = (reason: string): string => (reason.length <= REASON_LIMIT ? reason : `${reason.slice(0, REASON_LIMIT - 1)}…`);

/**
 * A count with its noun in the right number.
 *
 * @example
 * plural(1, 'source', 'sources') // '1 source'
 */
export const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

const joinReasons = (first: string, original: string | undefined): string => clipReason(original === undefined ? first : `${first}; worker said: ${original}`);

/**
 * Applies the ledger's size bounds to an outcome before it is stored, deliberately rather than by
 * letting DynamoDB reject the write:
 * - findings larger than {@link FINDINGS_LIMIT_BYTES} (as JSON) are dropped and the outcome
 *   becomes `invalid`, with a reason naming the size, because an answer built on truncated
 *   findings would read as whole;
 * - an outcome still larger than {@link OUTCOME_LIMIT_BYTES} also loses its observed block,
 *   sources and refusals (their counts stay in the reason), and is `invalid`.
 * Usage is not part of the bound: it lives in the ledger's counters.
 *
 * @example
 * boundOutcome({ ...outcome, findings: { blob: 'x'.repeat(70_000) } }).state // 'invalid'
 */
export const boundOutcome = (outcome: Outcome): Outcome => {
  const findingsBytes = outcome.findings === undefined ? 0 : utf8(JSON.stringify(outcome.findings) ?? '');
  let bounded = outcome;
  if (findingsBytes > FINDINGS_LIMIT_BYTES) {
    bounded = {
      ...outcome,
      state: 'invalid',
      findings: undefined,
      reason: joinReasons(`findings of ${findingsBytes} bytes exceed the ${FINDINGS_LIMIT_BYTES}-byte bound and were not stored`, outcome.reason),
    };
  }
  const total = valueSize(bounded);
  if (total <= OUTCOME_LIMIT_BYTES) return bounded;
  return {
    ...bounded,
    state: 'invalid',
    observed: null,
    sources: [],
    refusals: [],
    findings: undefined,
    reason: joinReasons(
      `outcome of ${total} bytes exceeds the ${OUTCOME_LIMIT_BYTES}-byte bound; observed coverage, ${plural(outcome.sources.length, 'source', 'sources')} and ${plural(outcome.refusals.length, 'refusal', 'refusals')} were not stored`,
      outcome.reason,
    ),
  };
};
