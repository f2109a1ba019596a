import { z } from 'zod';

/**
 * The HTTP surface of the contract beyond its JSON bodies: who the caller is (the tenant claim),
 * the `Idempotency-Key` header, and the bodies API Gateway answers with itself.
 */

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
  .refine((value) => utf8.encode(value).length <= TENANT_ID_MAX_BYTES, `must be at most ${TENANT_ID_MAX_BYTES} bytes of UTF-8`)
  .describe('The tenant of the caller, from its JWT claim: 1-256 bytes of well-formed UTF-8.');
export type TenantId = z.infer<typeof TenantId>;

/** The `Idempotency-Key` header of `POST /runs`: 1-255 printable ASCII characters, no spaces. */
export const IdempotencyKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 printable ASCII characters without spaces')
  .describe('A key that makes POST /runs idempotent: the same key and body answer with the same run.');

/**
 * The body of an answer API Gateway gives itself, before or instead of the function: 401
 * `Unauthorized`, 404 `Not Found` (no such route), 413 `Request Entity Too Large`, 429
 * `Too Many Requests`, 503 `Service Unavailable` (the function took too long). Every other
 * non-2xx answer carries an `ErrorBody`.
 */
export const GatewayError = z
  .object({ message: z.string().describe("API Gateway's own message (Unauthorized, Too Many Requests…).") })
  .describe('The body of an answer API Gateway gives itself, before or instead of the function.');
export type GatewayError = z.infer<typeof GatewayError>;
