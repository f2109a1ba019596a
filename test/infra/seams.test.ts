/**
 * The named seams between the construct and the code it deploys: each name is exported once, from
 * a module without the CDK, and both sides import it. These tests prove that the two sides agree
 * on the synthesized template, so a variable, attribute or error one side stops using shows up
 * here, not as a cold-start failure on AWS.
 */
import { TENANT_SCOPED_FUNCTIONS } from '../../lib/ledger/access';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { STACK_OUTPUTS } from '../../lib/infra/stack-outputs';
import { OUTCOME_ATTRIBUTES, StoredSubtaskItem } from '../../lib/ledger/items';
import { synthesizeLocalTemplate } from '../../lib/local/local-template';
import { RUN_EXECUTION_ERRORS } from '../../lib/orchestration/execution-events';
import { ENV, FUNCTION_CONFIG, POWERTOOLS_ENV, type FunctionName } from '../../lib/runtime/environment';
import { CfnTemplate, outputValues } from '../../lib/template/reader';
import { MODEL_ENV } from '../../lib/workers/models/config';
import { logicalIdAt, synthTesseraStack, type Synthesized } from './synth';

let synth: Synthesized;
beforeAll(() => {
  synth = synthTesseraStack({ fanOut: { model: { provider: 'bedrock', modelId: 'anthropic.claude-3-haiku-20240307-v1:0' } } });
});

/** The construct id of each function, by its module under functions/. */
const FUNCTION_IDS: Readonly<Record<FunctionName, string>> = {
  api: 'ApiFunction',
  dispatch: 'DispatchFunction',
  deadline: 'DeadlineFunction',
  worker: 'WorkerFunction',
  reconcile: 'ReconcileFunction',
};

/**
 * The functions that parse the model variables (`parseModelConfig`): the api checks a subtask's
 * model, the worker calls it, and reconcile calls it for a requested synthesis.
 */
const MODEL_READERS: readonly FunctionName[] = ['api', 'worker', 'reconcile'];

/** The functions that reach the ledger through a per-tenant role (`ledgerAccessFromEnv`). */
const LEDGER_ACCESS_READERS: readonly FunctionName[] = TENANT_SCOPED_FUNCTIONS;

const variablesOf = (name: FunctionName): string[] => {
  const id = logicalIdAt(synth.template, 'AWS::Lambda::Function', `/${FUNCTION_IDS[name]}/Function/Resource`);
  return Object.keys(z.record(z.string(), z.unknown()).parse(synth.template.toJSON().Resources[id].Properties.Environment.Variables)).sort();
};

describe('the environment seam', () => {
  const names = Object.keys(FUNCTION_IDS) as FunctionName[];

  it.each(names)('the construct sets exactly the variables the %s handler reads, and Powertools', (name) => {
    // Set on every function: Powertools' own settings and Node's source maps (lib/infra/tessera-function.ts).
    const everywhere = [...Object.values(POWERTOOLS_ENV), 'NODE_OPTIONS'];
    // Only `bedrock` needs a model id; the optional list of more allowed models is the user's to set.
    const model = MODEL_READERS.includes(name) ? [MODEL_ENV.provider, MODEL_ENV.modelId] : [];
    const access = LEDGER_ACCESS_READERS.includes(name) ? [ENV.ledgerAccess, ENV.ledgerAccessRoleArn] : [];
    const read = [...Object.keys(FUNCTION_CONFIG[name].shape), ...model, ...access];
    const set = variablesOf(name).filter((variable) => !everywhere.includes(variable));
    expect(set).toEqual([...read].sort());
  });

  it('gives dispatch and the deadline function (which enqueues hedge copies) the same kind queues', () => {
    const queueUrlsOf = (name: FunctionName): unknown => {
      const id = logicalIdAt(synth.template, 'AWS::Lambda::Function', `/${FUNCTION_IDS[name]}/Function/Resource`);
      return synth.template.toJSON().Resources[id].Properties.Environment.Variables[ENV.queueUrls];
    };
    expect(queueUrlsOf('deadline')).toBeDefined();
    expect(queueUrlsOf('deadline')).toEqual(queueUrlsOf('dispatch'));
  });

  it('names each variable of a function once', () => {
    for (const name of names) {
      const read = [...Object.keys(FUNCTION_CONFIG[name].shape), ...Object.values(MODEL_ENV), ...Object.values(POWERTOOLS_ENV)];
      expect(new Set(read).size).toBe(read.length);
    }
  });
});

describe('the outcome attributes seam', () => {
  it('denies the api every attribute in which the ledger keeps an outcome, including the reference to its parts', () => {
    const ledgerOutcomeAttributes = Object.keys(StoredSubtaskItem.shape).filter((attribute) => attribute.startsWith('outcome'));
    // A large outcome is stored in parts; `outcomeParts` points at them, so forging it forges the outcome.
    expect(ledgerOutcomeAttributes.sort()).toEqual(['outcome', 'outcomeGeneration', 'outcomeParts']);
    expect(OUTCOME_ATTRIBUTES).toEqual(expect.arrayContaining(ledgerOutcomeAttributes));
  });

  it('denies the api the result of a hedged race: its winner and the pieces that ended ok', () => {
    const raceAttributes = Object.keys(StoredSubtaskItem.shape).filter((attribute) => attribute === 'hedgeWinner' || attribute === 'piecesOk');
    expect(raceAttributes.sort()).toEqual(['hedgeWinner', 'piecesOk']);
    expect(OUTCOME_ATTRIBUTES).toEqual(expect.arrayContaining(raceAttributes));
  });

  it('is the list the api role is denied writes on', () => {
    const policies = Object.values(synth.template.findResources('AWS::IAM::Policy'));
    const denied = policies.flatMap((policy) =>
      (policy.Properties.PolicyDocument.Statement as { Sid?: string; Condition?: Record<string, Record<string, unknown>> }[])
        .filter((statement) => statement.Sid === 'ApiNeverWritesOutcomes')
        .map((statement) => statement.Condition?.['ForAnyValue:StringEquals']?.['dynamodb:Attributes']),
    );
    expect(denied).toEqual([[...OUTCOME_ATTRIBUTES]]);
  });
});

describe('the run error seam', () => {
  it('ends a failed run and a failed Finalize with the errors a status change event names', () => {
    const fails = Object.values(synth.asl.States)
      .filter((state) => state.Type === 'Fail')
      .map((state) => (state as { Error?: string }).Error);
    expect(fails.sort()).toEqual(Object.values(RUN_EXECUTION_ERRORS).sort());
  });
});

describe('the stack output seam', () => {
  it('the stack writes exactly the outputs STACK_OUTPUTS names', () => {
    expect(Object.keys(synth.template.toJSON().Outputs).sort()).toEqual(Object.values(STACK_OUTPUTS).sort());
  });

  it("the local cloud's template writes the queue outputs the end-to-end suite reads, under the stack's names", () => {
    const local = CfnTemplate.parse(synthesizeLocalTemplate('examples/app/workers.ts'));
    expect(Object.keys(outputValues(local)).sort()).toEqual([STACK_OUTPUTS.deadLetterQueueUrl, STACK_OUTPUTS.subtaskQueueUrls].sort());
  });
});
