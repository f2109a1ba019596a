import { Duration } from 'aws-cdk-lib';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { nagFindings, synthTesseraStack } from './synth';
import { ENV } from '../../lib/runtime/environment';

// cdk-nag base64-encodes reasons that are not plain ASCII; decode them so every reason reads as text.
const Suppression = z
  .object({ id: z.string(), reason: z.string(), applies_to: z.array(z.unknown()).optional(), is_reason_encoded: z.boolean().optional() })
  .transform((s) => ({ ...s, reason: s.is_reason_encoded ? Buffer.from(s.reason, 'base64').toString('utf8') : s.reason }));
const NagMetadata = z.object({ rules_to_suppress: z.array(Suppression) });

describe('cdk-nag AwsSolutions', () => {
  // One synth with every optional feature on, so the suppressions of each are exercised too.
  const { stack, template } = synthTesseraStack({
    alarmEmail: 'oncall@example.com',
    fanOut: {
      model: { provider: 'bedrock', modelId: 'anthropic.claude-3-haiku-20240307-v1:0' },
      corsAllowedOrigins: ['https://app.example.com'],
      kinds: { 'transaction-feed': { maxConcurrency: 10 } },
      workerTimeout: Duration.minutes(5),
      workerBatchingWindow: Duration.seconds(3),
    },
  });

  test('reports no unsuppressed finding', () => {
    expect(nagFindings(stack)).toEqual([]);
  });

  test('reports no unsuppressed finding for a stack with a concrete account and region (ARNs written literally)', () => {
    const concrete = synthTesseraStack({ env: { account: '000000000000', region: 'us-east-1' } });
    expect(nagFindings(concrete.stack)).toEqual([]);
  });

  test('every suppression has a written reason, and every IAM5 one names the wildcard it allows', () => {
    const suppressions = Object.values(template.toJSON().Resources as Record<string, { Metadata?: { cdk_nag?: unknown } }>)
      .filter((resource) => resource.Metadata?.cdk_nag)
      .flatMap((resource) => NagMetadata.parse(resource.Metadata?.cdk_nag).rules_to_suppress);
    expect(suppressions.length).toBeGreaterThan(0);
    for (const suppression of suppressions) {
      expect(suppression.reason.split(' ').length, suppression.id).toBeGreaterThanOrEqual(8);
      if (suppression.id === 'AwsSolutions-IAM5') expect(suppression.applies_to?.length, suppression.reason).toBeGreaterThan(0);
    }
  });

  test('only the rules this deployment knowingly waives are suppressed', () => {
    const ids = new Set(
      Object.values(template.toJSON().Resources as Record<string, { Metadata?: { cdk_nag?: unknown } }>)
        .filter((resource) => resource.Metadata?.cdk_nag)
        .flatMap((resource) => NagMetadata.parse(resource.Metadata?.cdk_nag).rules_to_suppress.map((s) => s.id)),
    );
    // SQS3: the run-closure dead-letter queue is a dead-letter queue of an EventBridge target, which the rule cannot see.
    expect([...ids].sort()).toEqual(['AwsSolutions-COG2', 'AwsSolutions-COG8', 'AwsSolutions-IAM5', 'AwsSolutions-SQS3']);
  });

  test('CORS, when configured, allows only the given origin and the headers the API reads', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: {
        AllowOrigins: ['https://app.example.com'],
        AllowMethods: ['GET', 'POST'],
        AllowHeaders: ['authorization', 'content-type', 'idempotency-key', 'if-none-match', 'prefer', 'mcp-protocol-version'],
        ExposeHeaders: ['location', 'etag', 'preference-applied'],
        MaxAge: 3600,
      },
    });
  });

  test('a 5-minute worker timeout and a 3-s batching window give a 1803 s visibility timeout (6 × 300 s + 3 s), a 300 s lease and 3-s windows', () => {
    template.hasResourceProperties('AWS::SQS::Queue', { VisibilityTimeout: 1803 });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { MaximumBatchingWindowInSeconds: 3 });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 300,
      Environment: { Variables: { [ENV.leaseSeconds]: '300' } },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: { MaximumConcurrency: 10 } });
  });

  test('alarms notify the e-mail topic', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.map((a) => a.Properties.AlarmActions)).toEqual(alarms.map(() => [{ Ref: expect.stringMatching(/^Alarms/) }]));
  });
});
