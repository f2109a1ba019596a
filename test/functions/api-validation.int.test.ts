import { describe, expect, it } from 'vitest';
import { createHandler, depsFromEnv } from '../../functions/api';
import { RunAccepted } from '../../lib/contract';
import { referenceRegistry } from '../../examples/app';
import { uniqueName } from '../support/aws';
import { farFuture } from '../domain/fixtures';
import { answerOf, apiEvent, errorOf, halfYearRequest, itemsOfTenant, pipeline, recordingExecutions } from './support';
import { ENV } from '../../lib/runtime/environment';
import { MODEL_ENV } from '../../lib/workers/models/config';

/**
 * Validation at `POST /runs` of requests that used to pass planning and fail later (or crash
 * it): far-future instants, budgets the ledger cannot keep, models the workers refuse, and
 * terminal control characters. The handler is built from a deployment's environment, exactly
 * as the Lambda builds it, over this file's real ledger on DynamoDB Local.
 */
const p = pipeline('fn-api-validation');

const deployment = (env: Record<string, string> = {}) => {
  const { executions, calls } = recordingExecutions();
  const deps = depsFromEnv(
    {
      [ENV.tableName]: 'unused-the-ledger-is-replaced',
      [ENV.stateMachineArn]: 'arn:aws:states:eu-west-1:123456789012:stateMachine:runs',
      [ENV.workerKinds]: JSON.stringify(['tax-statements', 'transaction-feed']),
      // As the construct sets them; the ledger is replaced, so no role is ever assumed.
      [ENV.ledgerAccess]: 'tenant-role',
      [ENV.ledgerAccessRoleArn]: 'arn:aws:iam::123456789012:role/ledger-access',
      POWERTOOLS_LOG_LEVEL: 'ERROR',
      ...env,
    },
    referenceRegistry,
  );
  const api = createHandler({ ...deps, ledger: p.get().ledger, executions, newRunId: () => uniqueName('run') });
  return {
    calls,
    post: async (tenant: string, body: unknown) => answerOf(await api(apiEvent({ routeKey: 'POST /runs', tenant, body: JSON.stringify(body) }))),
  };
};

const [quarterA, quarterB] = halfYearRequest().subtasks ?? [];
if (!quarterA || !quarterB) throw new Error('the half-year request has two quarters');

/** Posts a request that must be refused: 400, exactly these issues, and nothing written or started. */
const refused = async (body: unknown, env: Record<string, string> = {}) => {
  const tenant = uniqueName('tenant');
  const { post, calls } = deployment(env);
  const answer = await post(tenant, body);
  expect(answer.statusCode).toBe(400);
  expect(await itemsOfTenant(p.get(), tenant)).toEqual([]);
  expect(calls.start).toEqual([]);
  return errorOf(answer);
};

describe('POST /runs refuses, with 400 naming the field', () => {
  it('a far-future range whose split pieces could not be written (it used to answer 500)', async () => {
    const error = await refused(farFuture);
    expect(error.code).toBe('InvalidRunRequest');
    expect(error.issues).toEqual([
      {
        code: 'invalid_request',
        path: 'universe.toExclusive',
        message:
          'is after 9999-12-31 in the offset of from (9999-12-31T00:00:00+00:00); points of a range are written in that offset with four-digit years (got "9999-12-31T23:00:00-12:00")',
      },
    ]);
  });

  it('budget figures beyond what the ledger keeps exactly', async () => {
    const error = await refused(halfYearRequest({ subtasks: [{ ...quarterA, budget: { modelCalls: 1_000_000, estimatedCostPerCall: 1e15 } }, quarterB] }));
    expect(error.issues).toEqual([
      { code: 'invalid_request', path: 'subtasks.0.budget.estimatedCostPerCall', message: 'must be at most 1,000,000,000 cost units per call' },
    ]);
  });

  it('a subtask allowance larger than the run budget', async () => {
    const error = await refused(halfYearRequest({ subtasks: [quarterA, { ...quarterB, budget: { modelCalls: 41, estimatedCostPerCall: 1 } }] }));
    expect(error.issues).toEqual([
      { code: 'budget_exceeds_run', path: 'subtasks.1.budget.modelCalls', message: "must not exceed the run's budget.modelCalls (40; got 41)" },
    ]);
  });

  it("a model the deployment's workers do not allow", async () => {
    const error = await refused(halfYearRequest({ subtasks: [{ ...quarterA, model: 'anthropic.claude-3-haiku-20240307-v1:0' }, quarterB] }));
    expect(error.issues).toEqual([
      { code: 'unknown_model', path: 'subtasks.0.model', message: 'unknown model anthropic.claude-3-haiku-20240307-v1:0 (allowed: offline, offline:broaden)' },
    ]);
  });

  it('control characters in the goal', async () => {
    const error = await refused(halfYearRequest({ goal: 'Total \u001b[2J\u001b[1;1Hdone' }));
    expect(error.issues).toEqual([
      expect.objectContaining({
        code: 'invalid_request',
        path: 'goal',
        message: expect.stringMatching(/^must not contain control characters such as terminal escape sequences/),
      }),
    ]);
  });
});

describe('POST /runs accepts', () => {
  it('a Bedrock model the deployment configured, the same one its workers allow', async () => {
    const haiku = 'anthropic.claude-3-haiku-20240307-v1:0';
    const { post, calls } = deployment({ [MODEL_ENV.provider]: 'bedrock', [MODEL_ENV.modelId]: haiku });
    const tenant = uniqueName('tenant');
    const answer = await post(
      tenant,
      halfYearRequest({
        subtasks: [
          { ...quarterA, model: haiku },
          { ...quarterB, model: 'offline' },
        ],
      }),
    );
    expect(answer.statusCode).toBe(202);
    expect(calls.start).toEqual([{ runId: RunAccepted.parse(answer.body).runId, tenantId: tenant }]);
  });
});
