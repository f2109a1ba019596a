import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import { TesseraFanOut, type TesseraFanOutProps } from './fan-out';
import { STACK_OUTPUTS, type StackOutputName } from './stack-outputs';

/** Name of the user pool's tenant attribute; tokens carry it as `custom:tenant`. */
export const TENANT_ATTRIBUTE = 'tenant';

export interface TesseraStackProps extends StackProps {
  /** Fan-out settings, the worker module among them; `auth` is supplied by the stack's own user pool. */
  readonly fanOut: Omit<TesseraFanOutProps, 'auth' | 'alarmActions'>;
  /** An address subscribed to every alarm. @default - alarms without notification */
  readonly alarmEmail?: string;
}

/**
 * The standalone tessera deployment: a Cognito user pool that issues the API's JWTs (each user
 * carries an immutable `custom:tenant`), the `TesseraFanOut` construct, and the outputs a caller
 * needs. Teams with their own identity provider use `TesseraFanOut` directly instead.
 *
 * @example
 * new TesseraStack(app, 'Tessera', { fanOut: { workers: { entry: 'src/workers.ts' } }, alarmEmail: 'oncall@example.com' });
 */
export class TesseraStack extends Stack {
  readonly fanOut: TesseraFanOut;
  readonly userPool: cognito.UserPool;
  readonly userPoolClient: cognito.UserPoolClient;

  constructor(scope: Construct, id: string, props: TesseraStackProps) {
    super(scope, id, props);
    const removalPolicy = props.fanOut.removalPolicy ?? RemovalPolicy.RETAIN;
    this.userPool = this.createUserPool(removalPolicy);
    this.userPoolClient = this.userPool.addClient('ApiClient', {
      // A public client: browsers and CLIs cannot keep a client secret.
      generateSecret: false,
      authFlows: { userSrp: true, adminUserPassword: true },
      disableOAuth: true,
      preventUserExistenceErrors: true,
      enableTokenRevocation: true,
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
    });
    this.fanOut = new TesseraFanOut(this, 'FanOut', {
      ...props.fanOut,
      auth: {
        issuer: `https://cognito-idp.${this.region}.amazonaws.com/${this.userPool.userPoolId}`,
        // ID tokens carry the client id as `aud` and the tenant attribute as a claim.
        audiences: [this.userPoolClient.userPoolClientId],
        tenantClaim: `custom:${TENANT_ATTRIBUTE}`,
      },
      alarmActions: props.alarmEmail ? [new SnsAction(this.alarmTopic(props.alarmEmail))] : [],
    });
    this.outputs();
  }

  private createUserPool(removalPolicy: RemovalPolicy): cognito.UserPool {
    const pool = new cognito.UserPool(this, 'Users', {
      // Tenants are assigned by an administrator; nobody may sign themselves into a tenant.
      selfSignUpEnabled: false,
      signInAliases: { username: true, email: true },
      customAttributes: { [TENANT_ATTRIBUTE]: new cognito.StringAttribute({ minLen: 1, maxLen: 64, mutable: false }) },
      passwordPolicy: { minLength: 12, requireLowercase: true, requireUppercase: true, requireDigits: true, requireSymbols: true },
      accountRecovery: cognito.AccountRecovery.EMAIL_ONLY,
      mfa: cognito.Mfa.OPTIONAL,
      mfaSecondFactor: { sms: false, otp: true },
      removalPolicy,
    });
    NagSuppressions.addResourceSuppressions(pool, [
      {
        id: 'AwsSolutions-COG2',
        reason:
          'MFA is optional (TOTP) so the deploy guide can mint a token with admin-initiate-auth; production teams bring their own issuer through TesseraFanOut auth props.',
      },
      {
        id: 'AwsSolutions-COG8',
        reason: 'Threat protection needs the Cognito Plus feature plan, a per-user cost this reference pool leaves to the deployer.',
      },
    ]);
    return pool;
  }

  private alarmTopic(email: string): sns.Topic {
    // Not KMS-encrypted: CloudWatch cannot publish to a topic under the AWS managed SNS key, and
    // alarm state changes carry no run data worth a customer managed key.
    const topic = new sns.Topic(this, 'Alarms', { enforceSSL: true, displayName: 'tessera alarms' });
    topic.addSubscription(new subscriptions.EmailSubscription(email));
    return topic;
  }

  private outputs(): void {
    const { fanOut } = this;
    const values: Record<StackOutputName, string> = {
      [STACK_OUTPUTS.apiUrl]: fanOut.api.url,
      [STACK_OUTPUTS.userPoolId]: this.userPool.userPoolId,
      [STACK_OUTPUTS.userPoolClientId]: this.userPoolClient.userPoolClientId,
      [STACK_OUTPUTS.tableName]: fanOut.table.tableName,
      [STACK_OUTPUTS.stateMachineArn]: fanOut.stateMachine.stateMachineArn,
      [STACK_OUTPUTS.deadLetterQueueUrl]: fanOut.deadLetterQueue.queueUrl,
      [STACK_OUTPUTS.subtaskQueueUrls]: fanOut.queueUrlsJson,
    };
    for (const [name, value] of Object.entries(values)) new CfnOutput(this, name, { value });
  }
}
