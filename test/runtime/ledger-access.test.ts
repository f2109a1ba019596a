import { describe, expect, it } from 'vitest';
import { ENV } from '../../lib/runtime/environment';
import { ConfigError } from '../../lib/runtime/errors';
import { ledgerAccessFromEnv } from '../../lib/runtime/ledger-credentials';
import { sessionName } from '../../lib/runtime/ledger-credentials';
import { tenantKeyPattern, tenantSessionPolicy } from '../../lib/ledger/access';

const ROLE = 'arn:aws:iam::123456789012:role/Tessera-ApiLedgerAccess-1A2B';

const problemOf = (env: Record<string, string>): string => {
  try {
    ledgerAccessFromEnv(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('ledgerAccessFromEnv', () => {
  it("reads the deployed setting: the function's ledger-access role", () => {
    expect(ledgerAccessFromEnv({ [ENV.ledgerAccess]: 'tenant-role', [ENV.ledgerAccessRoleArn]: ROLE })).toEqual({ mode: 'tenant-role', roleArn: ROLE });
  });

  it('refuses the deployed setting without a role, or with something that is not a role ARN', () => {
    expect(problemOf({ [ENV.ledgerAccess]: 'tenant-role' })).toBe('invalid function configuration: LEDGER_ACCESS_ROLE_ARN is missing');
    expect(problemOf({ [ENV.ledgerAccess]: 'tenant-role', [ENV.ledgerAccessRoleArn]: 'arn:aws:s3:::bucket' })).toBe(
      'invalid function configuration: LEDGER_ACCESS_ROLE_ARN is not an IAM role ARN',
    );
  });

  it('accepts local access only beside a local DynamoDB endpoint, as the local cloud sets both', () => {
    expect(ledgerAccessFromEnv({ [ENV.ledgerAccess]: 'local', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' })).toEqual({ mode: 'local' });
    expect(problemOf({ [ENV.ledgerAccess]: 'local' })).toBe(
      'invalid function configuration: LEDGER_ACCESS is local, but no local DynamoDB endpoint is set (AWS_ENDPOINT_URL_DYNAMODB)',
    );
  });

  it('refuses a function with no setting at all, or an unknown one: never a silent default', () => {
    expect(problemOf({})).toBe('invalid function configuration: LEDGER_ACCESS is missing');
    expect(problemOf({ [ENV.ledgerAccess]: 'ambient' })).toBe('invalid function configuration: LEDGER_ACCESS must be tenant-role or local, not "ambient"');
  });
});

describe('the tenant session', () => {
  it("names the tenant's key prefix, its `*` escaped, and nothing broader", () => {
    expect(tenantKeyPattern('acme')).toBe('T#acme#*');
    expect(tenantKeyPattern('a#b')).toBe('T#a%23b#*');
    expect(tenantKeyPattern('a*')).toBe('T#a${*}#*');
    expect(JSON.parse(tenantSessionPolicy('acme'))).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'dynamodb:*',
          Resource: '*',
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#acme#*'] }, Null: { 'dynamodb:LeadingKeys': 'false' } },
        },
      ],
    });
  });

  it("fits STS's 2,048-character limit for the longest tenant a token may carry (256 bytes, each encoded as %XX)", () => {
    expect(tenantSessionPolicy('€'.repeat(85)).length).toBeLessThan(2048);
  });

  it('has a session name STS accepts, distinct per tenant', () => {
    expect(sessionName('acme')).toMatch(/^tenant-[0-9a-f]{32}$/);
    expect(sessionName('acme')).not.toBe(sessionName('acme '));
  });
});
