import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * Canonical JSON: object keys sorted, `undefined` members dropped, arrays kept in order.
 * Two values that mean the same thing (same fields, any key order) serialise identically,
 * which is what an idempotency or immutability hash needs.
 *
 * @example
 * canonicalJson({ b: 1, a: [2, { d: undefined, c: 3 }] }) // '{"a":[2,{"c":3}],"b":1}'
 */
export const canonicalJson = (value: unknown): string => JSON.stringify(sortKeys(value));

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, member]) => [key, sortKeys(member)]));
};

/**
 * SHA-256 of the canonical JSON, as `sha256:<hex>`.
 *
 * @example
 * contentHash({ a: 1, b: 2 }) === contentHash({ b: 2, a: 1 }) // true
 */
export const contentHash = (value: unknown): string => `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;

/**
 * A value reduced to plain JSON: `undefined` members dropped, `NaN` and infinities become
 * `null`, dates become strings. Worker findings pass through this before they are stored so the
 * ledger holds exactly what a JSON reader would see.
 *
 * @example
 * toPlainJson({ total: 3880.5, note: undefined, when: new Date(0) }) // { total: 3880.5, when: '1970-01-01T00:00:00.000Z' }
 */
export const toPlainJson = (value: unknown): z.infer<ReturnType<typeof z.json>> | undefined => {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : z.json().parse(JSON.parse(text));
};
