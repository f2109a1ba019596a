/**
 * Tenant-scoped ledger access. A tenant-scoped function (api, dispatch, deadline, worker) holds
 * no DynamoDB permission of its own: its role may only assume its ledger-access role, and it does
 * so once per tenant, with a session policy (`tenantSessionPolicy`, lib/ledger/access.ts) that
 * lets the session touch only keys starting with that tenant's prefix. Its ledger client signs
 * each request with the credentials of the tenant the function is acting for
 * (`actingFor`, lib/runtime/tenant-scope.ts), so IAM refuses a request for another tenant's keys,
 * a Scan, or any call the function's own code makes with its ambient credentials.
 *
 * Credentials are cached per tenant until {@link REFRESH_BEFORE_MS} before they expire; the
 * cost is one AssumeRole per tenant per warm function instance per hour (docs/architecture.md,
 * "Tenant-scoped ledger access").
 */
import { createHash } from 'node:crypto';
import { AssumeRoleCommand, type STSClient } from '@aws-sdk/client-sts';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, type TranslateConfig } from '@aws-sdk/lib-dynamodb';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { tenantSessionPolicy } from '../ledger/access';
import { ENV } from './environment';
import { ConfigError, LedgerCredentialsUnavailable, NoTenantBound } from './errors';
import { actingTenant } from './tenant-scope';

/** How a function reaches the ledger; see {@link ENV.ledgerAccess}. */
export type LedgerAccess = { readonly mode: 'tenant-role'; readonly roleArn: string } | { readonly mode: 'local' };

/** An IAM role ARN (any partition). */
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]+$/;

/**
 * Reads {@link ENV.ledgerAccess} and the role. `tenant-role` needs the role's ARN. `local` is
 * accepted only when the SDK's DynamoDB endpoint is overridden (`AWS_ENDPOINT_URL_DYNAMODB` or
 * `AWS_ENDPOINT_URL`), as the local cloud and the emulator lane set it: a function deployed to
 * AWS with `local` fails its cold start instead of reaching the real table with its own role.
 *
 * @example
 * ledgerAccessFromEnv({ LEDGER_ACCESS: 'tenant-role', LEDGER_ACCESS_ROLE_ARN: 'arn:aws:iam::123456789012:role/x' })
 * // { mode: 'tenant-role', roleArn: 'arn:aws:iam::123456789012:role/x' }
 */
export const ledgerAccessFromEnv = (env: Readonly<Record<string, string | undefined>>): LedgerAccess => {
  const mode = env[ENV.ledgerAccess];
  const roleArn = env[ENV.ledgerAccessRoleArn];
  switch (mode) {
    case 'tenant-role':
      if (roleArn === undefined || !ROLE_ARN.test(roleArn)) {
        throw new ConfigError([{ name: ENV.ledgerAccessRoleArn, problem: roleArn === undefined ? 'is missing' : 'is not an IAM role ARN' }]);
      }
      return { mode, roleArn };
    case 'local':
      if (!env.AWS_ENDPOINT_URL_DYNAMODB && !env.AWS_ENDPOINT_URL) {
        throw new ConfigError([{ name: ENV.ledgerAccess, problem: 'is local, but no local DynamoDB endpoint is set (AWS_ENDPOINT_URL_DYNAMODB)' }]);
      }
      return { mode };
    case undefined:
      throw new ConfigError([{ name: ENV.ledgerAccess, problem: 'is missing' }]);
    default:
      throw new ConfigError([{ name: ENV.ledgerAccess, problem: `must be tenant-role or local, not ${JSON.stringify(mode)}` }]);
  }
};

/** Session length asked of STS: an hour, the most a role assumed by a role may have. */
export const SESSION_SECONDS = 3600;
/**
 * Credentials this close to expiry are replaced: the SDK's own margin (5 minutes), so a request
 * never leaves with credentials that could expire in flight.
 */
export const REFRESH_BEFORE_MS = 5 * 60_000;
/** Tenants whose credentials (and clients) one function instance keeps; the oldest go first. */
export const MAX_CACHED_TENANTS = 1000;

/** Temporary credentials, with the instant they expire. */
export type TenantCredentialIdentity = AwsCredentialIdentity & { readonly expiration: Date };

/** Credentials per tenant, from STS, cached while valid. */
export interface TenantCredentials {
  readonly forTenant: (tenantId: string) => Promise<TenantCredentialIdentity>;
}

export interface TenantCredentialsOptions {
  readonly sts: Pick<STSClient, 'send'>;
  readonly roleArn: string;
  /** Epoch milliseconds; tests pass a clock they move. */
  readonly now?: () => number;
  readonly sessionSeconds?: number;
}

/**
 * A session name per tenant, as STS allows (`[\w+=,.@-]`, at most 64): a digest of the tenant,
 * so CloudTrail tells tenants apart without the name carrying the tenant id itself.
 *
 * @example
 * sessionName('acme') // 'tenant-' + 32 hex digits
 */
export const sessionName = (tenantId: string): string => `tenant-${createHash('sha256').update(tenantId).digest('hex').slice(0, 32)}`;

const assumeFor = async (options: TenantCredentialsOptions, tenantId: string): Promise<TenantCredentialIdentity> => {
  const output = await options.sts.send(
    new AssumeRoleCommand({
      RoleArn: options.roleArn,
      RoleSessionName: sessionName(tenantId),
      Policy: tenantSessionPolicy(tenantId),
      DurationSeconds: options.sessionSeconds ?? SESSION_SECONDS,
    }),
  );
  const c = output.Credentials;
  if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) throw new LedgerCredentialsUnavailable(options.roleArn);
  return { accessKeyId: c.AccessKeyId, secretAccessKey: c.SecretAccessKey, sessionToken: c.SessionToken, expiration: c.Expiration };
};

/** Keeps at most {@link MAX_CACHED_TENANTS} entries, dropping the oldest inserted. */
const remember = <V>(map: Map<string, V>, key: string, value: V): V => {
  map.delete(key);
  if (map.size >= MAX_CACHED_TENANTS) map.delete(map.keys().next().value as string);
  map.set(key, value);
  return value;
};

/**
 * One AssumeRole per tenant per validity window: a tenant's credentials are reused until
 * {@link REFRESH_BEFORE_MS} before they expire; concurrent requests of one tenant share one
 * AssumeRole in flight; a failed AssumeRole is not remembered, so the next request tries again.
 *
 * @example
 * const credentials = tenantCredentials({ sts: new STSClient({}), roleArn });
 * await credentials.forTenant('acme'); // AssumeRole; later calls within the hour reuse it
 */
export const tenantCredentials = (options: TenantCredentialsOptions): TenantCredentials => {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { readonly identity?: TenantCredentialIdentity; readonly pending?: Promise<TenantCredentialIdentity> }>();
  return {
    forTenant: (tenantId) => {
      const entry = entries.get(tenantId);
      if (entry?.identity && entry.identity.expiration.getTime() - now() > REFRESH_BEFORE_MS) return Promise.resolve(entry.identity);
      if (entry?.pending) return entry.pending;
      const pending = assumeFor(options, tenantId).then(
        (identity) => remember(entries, tenantId, { identity }).identity ?? identity,
        (error: unknown) => {
          if (entries.get(tenantId)?.pending === pending) entries.delete(tenantId);
          throw error;
        },
      );
      remember(entries, tenantId, { ...entry, pending });
      return pending;
    },
  };
};

/** A credential provider the SDK must call for every request (its own memo would keep credentials past our refresh). */
const unmemoized = (provider: () => Promise<AwsCredentialIdentity>): AwsCredentialIdentityProvider => Object.assign(provider, { memoized: true });

export interface TenantScopedClientOptions {
  readonly credentials: TenantCredentials;
  /** A DynamoDB client signed by `credentials` (region and endpoint from the environment). */
  readonly newClient: (credentials: AwsCredentialIdentityProvider) => DynamoDBClient;
  readonly translateConfig: TranslateConfig;
}

/**
 * A document client that sends each request with the credentials of the tenant the function is
 * acting for: one DynamoDB client per tenant, made on first use and kept with its credentials.
 * Outside `actingFor` it refuses with {@link NoTenantBound}. The client it returns is itself
 * never signed: its own credentials refuse, so nothing can bypass the per-tenant routing.
 *
 * @example
 * const client = tenantScopedClient({ credentials, newClient: (c) => new DynamoDBClient({ credentials: c }), translateConfig });
 * await actingFor('acme', () => client.send(new GetCommand({ … }))); // signed for acme
 */
export const tenantScopedClient = (options: TenantScopedClientOptions): DynamoDBDocumentClient => {
  const clients = new Map<string, DynamoDBDocumentClient>();
  const newTenantClient = (tenantId: string): DynamoDBDocumentClient =>
    DynamoDBDocumentClient.from(options.newClient(unmemoized(() => options.credentials.forTenant(tenantId))), options.translateConfig);
  const clientFor = (tenantId: string): DynamoDBDocumentClient => clients.get(tenantId) ?? remember(clients, tenantId, newTenantClient(tenantId));
  const refuse = unmemoized(() => Promise.reject(new NoTenantBound('(unrouted)')));
  const router = DynamoDBDocumentClient.from(options.newClient(refuse), options.translateConfig);
  const send = (command: { constructor: { name: string } }) => {
    const tenantId = actingTenant();
    if (tenantId === undefined) return Promise.reject(new NoTenantBound(command.constructor.name));
    return clientFor(tenantId).send(command as never);
  };
  return Object.assign(router, { send: send as DynamoDBDocumentClient['send'] });
};
