import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import { decodeJwt } from 'jose';
import { TenantId } from '../contract';

/**
 * The header API Gateway's JWT authorizer reads the bearer token from: the construct's identity
 * source, and where the API handler reads the same token's claim types.
 */
export const TOKEN_HEADER = 'Authorization';

/** The caller's tenant, or the answer that refuses the request. */
export type TenantOutcome =
  | { readonly ok: true; readonly tenantId: string }
  | { readonly ok: false; readonly statusCode: 401 | 403; readonly code: 'Unauthorized' | 'NoTenant' | 'InvalidTenant'; readonly message: string };

const kindOf = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;

const bearer = (header: string | undefined): string | undefined => /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];

/**
 * Reads the tenant of a request that API Gateway's JWT authorizer let through.
 *
 * API Gateway verifies the token, then hands the integration every claim as a string
 * (`requestContext.authorizer.jwt.claims`): a number or boolean becomes its text (`123` → `"123"`),
 * an array becomes `[a b]`, an object its JSON text, and a null-valued claim is left out. So the
 * claims alone cannot tell the tenant `"123"` from the number `123`, nor `"[a b]"` from an array.
 * The tenant is therefore taken from the claims, and accepted only when the very token the
 * authorizer verified (the `Authorization` header) carries that claim as a JSON string with the
 * same value, and the value follows the tenant rule (`TenantId`). Anything else is refused with
 * 403 and a message naming the claim; never coerced into a tenant of its own.
 *
 * @example
 * const tenant = tenantOf(event, 'custom:tenant');
 * if (!tenant.ok) return errorResponse(tenant.statusCode, { code: tenant.code, message: tenant.message, requestId });
 */
export const tenantOf = (event: APIGatewayProxyEventV2WithJWTAuthorizer, claim: string): TenantOutcome => {
  const delivered = event.requestContext.authorizer?.jwt?.claims?.[claim];
  if (delivered === undefined) return { ok: false, statusCode: 403, code: 'NoTenant', message: `the token has no ${claim} claim` };
  const token = bearer(event.headers?.[TOKEN_HEADER.toLowerCase()]);
  let payload: Record<string, unknown>;
  try {
    if (token === undefined) throw new Error('no bearer token');
    payload = decodeJwt(token);
  } catch {
    // Unreachable behind the JWT authorizer, which refuses such a request itself.
    return { ok: false, statusCode: 401, code: 'Unauthorized', message: `the request has no bearer JWT in its ${TOKEN_HEADER} header` };
  }
  const raw = payload[claim];
  if (raw !== undefined && typeof raw !== 'string') {
    return { ok: false, statusCode: 403, code: 'InvalidTenant', message: `the token's ${claim} claim must be a string, not ${kindOf(raw)}` };
  }
  if (raw !== delivered) {
    return { ok: false, statusCode: 403, code: 'InvalidTenant', message: `the token's ${claim} claim is not the one the authorizer verified` };
  }
  const parsed = TenantId.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      statusCode: 403,
      code: 'InvalidTenant',
      message: `the token's ${claim} claim ${parsed.error.issues[0]?.message ?? 'is not a tenant id'}`,
    };
  }
  return { ok: true, tenantId: parsed.data };
};
