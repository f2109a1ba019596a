/** The issuer and audience the local API's JWT authorizer is configured with. */
export const LOCAL_AUTH = { issuer: 'https://tessera.local', audience: 'tessera-local', tenantClaim: 'custom:tenant' } as const;
