import { randomUUID } from 'node:crypto';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT, type JSONWebKeySet, type JWTPayload } from 'jose';

/**
 * The local cloud's own identity provider: an RS256 key pair generated at start, its JWKS, a way
 * to mint tokens, and the checks API Gateway's JWT authorizer applies (signature, issuer, audience
 * or `client_id`, expiry). Only the local cloud can sign, so the template's issuer and audience are
 * replaced by this authority's.
 */

/** What a minted token says. */
export interface MintTokenOptions {
  /** Tenant ID, written to the authority's tenant claim (`custom:tenant` by default). */
  readonly tenant?: string;
  readonly subject: string;
  /** Seconds from now, or a jose duration such as `'1h'`. @default 3600 */
  readonly expiresIn?: number | string;
  /** Written space-separated to the `scope` claim. */
  readonly scopes?: readonly string[];
  /** Any other claims. */
  readonly claims?: Readonly<Record<string, unknown>>;
  /** @default the authority's first audience */
  readonly audience?: string;
}

/** The verified claims, or why API Gateway's authorizer would refuse the token. */
export type VerifyResult = { readonly ok: true; readonly claims: JWTPayload } | { readonly ok: false; readonly reason: string };

/** The local identity provider of one local cloud. */
export interface JwtAuthority {
  readonly issuer: string;
  readonly audience: readonly string[];
  readonly tenantClaim: string;
  /** The public keys, as served at `/.well-known/jwks.json`. */
  readonly jwks: JSONWebKeySet;
  mintToken(options: MintTokenOptions): Promise<string>;
  verify(token: string): Promise<VerifyResult>;
}

const audienceMatches = (claims: JWTPayload, audience: readonly string[]): boolean => {
  const aud = claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  return aud.some((value) => audience.includes(value)) || (typeof claims.client_id === 'string' && audience.includes(claims.client_id));
};

/**
 * Creates an authority with a fresh key pair.
 *
 * @example
 * const auth = await createJwtAuthority({ issuer: 'http://127.0.0.1:3000', audience: ['tessera-local'] });
 * const token = await auth.mintToken({ tenant: 'acme', subject: 'alice' });
 * (await auth.verify(token)).ok; // true
 */
export const createJwtAuthority = async (options: {
  issuer: string;
  audience: readonly string[];
  /** @default 'custom:tenant' */
  tenantClaim?: string;
}): Promise<JwtAuthority> => {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  const jwks: JSONWebKeySet = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] };
  const keySet = createLocalJWKSet(jwks);
  const tenantClaim = options.tenantClaim ?? 'custom:tenant';
  const audience = [...options.audience];

  const mintToken = (mint: MintTokenOptions): Promise<string> => {
    const claims: Record<string, unknown> = { ...mint.claims };
    if (mint.tenant !== undefined) claims[tenantClaim] = mint.tenant;
    if (mint.scopes?.length) claims.scope = mint.scopes.join(' ');
    return (
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer(options.issuer)
        .setAudience(mint.audience ?? audience[0] ?? '')
        .setSubject(mint.subject)
        .setIssuedAt()
        .setJti(randomUUID())
        // jose reads a number as an absolute epoch second and a string as a duration from now.
        .setExpirationTime(typeof mint.expiresIn === 'string' ? mint.expiresIn : Math.floor(Date.now() / 1000) + (mint.expiresIn ?? 3600))
        .sign(privateKey)
    );
  };

  const verify = async (token: string): Promise<VerifyResult> => {
    try {
      const { payload } = await jwtVerify(token, keySet, { issuer: options.issuer, algorithms: ['RS256'], requiredClaims: ['exp'] });
      return audienceMatches(payload, audience)
        ? { ok: true, claims: payload }
        : { ok: false, reason: 'the token has no audience or client_id the API accepts' };
    } catch (error) {
      return { ok: false, reason: (error as Error).message };
    }
  };

  return { issuer: options.issuer, audience, tenantClaim, jwks, mintToken, verify };
};
