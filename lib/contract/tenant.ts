import { z } from 'zod';

/**
 * The tenant id: the value of the token's tenant claim (`custom:tenant` by default). Every ledger
 * key starts with it, so it is the boundary between tenants, and it has one rule, defined here and
 * used by both the API (which refuses a token that breaks it with 403) and the ledger (which
 * refuses to build a key from anything else):
 *
 * - a JSON string in the token: not a number, boolean, array, object or null (see
 *   docs/api.md, "Tenant claim");
 * - 1 to 256 bytes of UTF-8: the ledger percent-encodes the tenant into its keys (at most 3
 *   characters per byte), and 256 bytes keep the longest run and idempotency keys well inside
 *   DynamoDB's 2048-byte partition-key limit;
 * - well-formed Unicode: a lone UTF-16 surrogate (possible in JSON as `"\ud800"`) has no UTF-8
 *   form and cannot be encoded into a key.
 */
export const TENANT_ID_MAX_BYTES = 256;

const utf8 = new TextEncoder();

/** With the `u` flag a surrogate pair is one code point, so this matches only a lone surrogate. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Whether a string is well-formed Unicode, so that it has a UTF-8 form (and `encodeURIComponent`
 * does not throw on it). JSON text and decoded URLs can both carry a lone surrogate.
 *
 * @example
 * isWellFormed('acme'); // true
 * isWellFormed('\ud800'); // false
 */
export const isWellFormed = (value: string): boolean => !LONE_SURROGATE.test(value);

export const TenantId = z
  .string()
  .min(1, 'must not be empty')
  .refine(isWellFormed, 'must be well-formed Unicode (it has a lone surrogate)')
  .refine((value) => utf8.encode(value).length <= TENANT_ID_MAX_BYTES, `must be at most ${TENANT_ID_MAX_BYTES} bytes of UTF-8`);
export type TenantId = z.infer<typeof TenantId>;
