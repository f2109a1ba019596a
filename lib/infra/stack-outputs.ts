/**
 * The names of the Tessera stack's CloudFormation outputs. `TesseraStack` writes them; the
 * deploy guide, the emulator lane (scripts/emulator/run.ts), the local cloud (which writes the
 * two the end-to-end suite reads, under the same names) and the tests read them. This module
 * imports no CDK, so every side can import it.
 *
 * @example
 * const apiUrl = outputs[STACK_OUTPUTS.apiUrl]; // from `describe-stacks` or `cdk-outputs.json`
 */
export const STACK_OUTPUTS = {
  apiUrl: 'ApiUrl',
  userPoolId: 'UserPoolId',
  userPoolClientId: 'UserPoolClientId',
  tableName: 'TableName',
  stateMachineArn: 'StateMachineArn',
  deadLetterQueueUrl: 'DeadLetterQueueUrl',
  subtaskQueueUrls: 'SubtaskQueueUrls',
} as const;

/** The name of one output of the Tessera stack. */
export type StackOutputName = (typeof STACK_OUTPUTS)[keyof typeof STACK_OUTPUTS];
