import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../lib/contract';
import { TRANSIENT_ERRORS } from '../../lib/infra/transient-errors';
import {
  boundOutcome,
  closeReason,
  createLedger,
  itemSize,
  LedgerConfigurationError,
  sealReason,
  toOutcome,
  toRunResource,
  toSubtaskView,
  WriteConflict,
  type SubtaskItem,
} from '../../lib/ledger';
import type { LateItem } from '../../lib/ledger/items';
import { canonicalJson, contentHash } from '../../lib/ledger/canonical';
import { retryConflicts } from '../../lib/ledger/failures';
import { expressions } from '../../lib/ledger/io';
import { runPartition, utcDay } from '../../lib/ledger/keys';
import { valueSize } from '../../lib/ledger/size';

const subtask = (overrides: Partial<SubtaskItem> = {}): SubtaskItem => ({
  pk: 'T#acme#R#r-1',
  sk: 'SUB#C',
  entity: 'subtask',
  subtaskId: 'C',
  round: 1,
  position: 2,
  assignment: {
    id: 'C',
    worker: 'tax-statements',
    round: 1,
    questionIds: ['q1'],
    required: true,
    assigned: { from: '2025-07-01', toExclusive: '2025-10-01' },
    deadline: '2040-06-01T12:01:00.000Z',
    budget: { modelCalls: 4, estimatedCostPerCall: 7 },
  },
  assignmentHash: 'sha256:test',
  dispatchedAt: '2040-06-01T12:00:00.000Z',
  deadlineMs: Date.parse('2040-06-01T12:01:00.000Z'),
  costPerCall: 7,
  callsLimit: 4,
  costLimit: 28,
  callsLeft: 4,
  costLeft: 28,
  state: 'timed_out',
  generation: 0,
  updatedAt: '2040-06-01T12:01:00.000Z',
  ...overrides,
});

const okOutcome = (overrides: Partial<Outcome> = {}): Outcome => ({
  subtaskId: 'A',
  state: 'ok',
  observed: { minDate: '2025-01-02', maxDate: '2025-03-31', recordCount: 180 },
  sources: ['stmt-2025-01'],
  sourcesReached: 1,
  findings: { totalDeductible: 3880 },
  usage: { modelCalls: 0, estimatedCost: 0 },
  refusals: [],
  ...overrides,
});

describe('item sizes', () => {
  it('counts names and values the way DynamoDB documents it', () => {
    expect(itemSize({ pk: 'T#a#R#r', sk: 'RUN' })).toBe(14);
    expect(valueSize('héllo')).toBe(6);
    expect(valueSize(7)).toBe(2);
    expect(valueSize(12345)).toBe(4);
    expect(valueSize(100)).toBe(2);
    expect(valueSize([1, 'ab'])).toBe(9);
    expect(valueSize({ a: true })).toBe(6);
  });
});

describe('boundOutcome', () => {
  it('leaves an outcome within the bounds untouched', () => {
    const outcome = okOutcome();
    expect(boundOutcome(outcome)).toBe(outcome);
  });

  it('records oversized findings as invalid without them, keeping the worker’s reason', () => {
    const bounded = boundOutcome(okOutcome({ findings: { notes: 'x'.repeat(70_000) }, reason: 'long notes' }));
    expect(bounded).toMatchObject({ state: 'invalid', findings: undefined, observed: { recordCount: 180 } });
    expect(bounded.reason).toBe('findings of 70012 bytes exceed the 65536-byte bound and were not stored; worker said: long notes');
  });

  it('keeps the observed ids of a 50,000-id assignment: they are stored in parts, within the bound', () => {
    const ids = Array.from({ length: 50_000 }, (_, i) => `acct-${String(i).padStart(6, '0')}`);
    const outcome = okOutcome({ observed: { ids, recordCount: 50_000 }, findings: undefined });
    expect(boundOutcome(outcome)).toBe(outcome);
  });

  it('drops observed coverage and sources when the outcome as a whole would not fit one transaction', () => {
    // 32,000 ids of 100 bytes: 3.2 MB as DynamoDB counts it, over the 3 MiB (3,145,728-byte) bound.
    const ids = Array.from({ length: 32_000 }, (_, i) => `ticket-${String(i).padStart(93, '0')}`);
    const bounded = boundOutcome(okOutcome({ observed: { ids, recordCount: 32_000 }, findings: undefined }));
    expect(bounded).toMatchObject({ state: 'invalid', observed: null, sources: [], refusals: [] });
    const size = Number(/^outcome of (\d+) bytes/.exec(bounded.reason ?? '')?.[1]);
    expect(size).toBeGreaterThan(32_000 * 100);
    expect(bounded.reason).toMatch(/exceeds the 3145728-byte bound; observed coverage, 1 source and 0 refusals were not stored$/);
  });
});

describe('keys', () => {
  it('cannot be forged across tenants with a # in a tenant or run id', () => {
    expect(runPartition('acme#R#x', 'y')).not.toBe(runPartition('acme', 'x#R#y'));
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), fc.string(), (t1, r1, t2, r2) => {
        fc.pre(t1 !== t2 || r1 !== r2);
        expect(runPartition(t1, r1)).not.toBe(runPartition(t2, r2));
      }),
    );
  });

  it('charges a tenant by the UTC day of the clock', () => {
    expect(utcDay(Date.parse('2040-06-30T23:59:59.999Z'))).toBe('2040-06-30');
    expect(utcDay(Date.parse('2040-07-01T00:30:00+02:00'))).toBe('2040-06-30');
  });
});

describe('content hashes', () => {
  const reversedKeys = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(reversedKeys);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reversedKeys(v)]),
    );
  };

  it('ignore key order and undefined members but not array order', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: undefined, c: 3 }] })).toBe('{"a":[2,{"c":3}],"b":1}');
    expect(contentHash({ ids: ['a', 'b'] })).not.toBe(contentHash({ ids: ['b', 'a'] }));
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(contentHash(reversedKeys(value))).toBe(contentHash(value));
      }),
    );
  });
});

describe('rendered reasons', () => {
  it('say why a subtask timed out from what its item knows', () => {
    expect(sealReason(subtask())).toBe('deadline 2040-06-01T12:01:00.000Z passed; never claimed: no worker picked it up');
    expect(sealReason(subtask({ generation: 2, workerId: 'w-9' }))).toBe(
      'deadline 2040-06-01T12:01:00.000Z passed; claimed by generation 2 (worker w-9) but no result arrived',
    );
    expect(
      sealReason(
        subtask({
          generation: 1,
          workerId: 'w-9',
          releasedAt: '2040-06-01T12:00:20.000Z',
          lastDeliveryFailure: { receiveCount: 1, errorName: 'Throttled', at: '2040-06-01T12:00:20.000Z' },
        }),
      ),
    ).toBe('deadline 2040-06-01T12:01:00.000Z passed; 1 delivery failed (last with Throttled); generation 1 (worker w-9) released its claim without a result');
  });

  it('say that a result arrived late once late evidence exists, never that none arrived', () => {
    const claimed = subtask({ generation: 1, workerId: 'w-1' });
    const late = (generation: number, receivedAt: string): LateItem => ({
      pk: 'T#acme#R#r-1',
      sk: `LATE#C#${generation}`,
      entity: 'late',
      subtaskId: 'C',
      receivedAt,
      generation,
      refusedBecause: 'sealed',
      outcome: { subtaskId: 'C', state: 'ok', observed: null, sources: [], sourcesReached: 1, usage: { modelCalls: 1, estimatedCost: 7 }, refusals: [] },
    });
    expect(toSubtaskView(claimed, []).reason).toBe('deadline 2040-06-01T12:01:00.000Z passed; claimed by generation 1 (worker w-1) but no result arrived');
    expect(toSubtaskView(claimed, [late(1, '2040-06-01T12:01:03.000Z')]).reason).toBe(
      'deadline 2040-06-01T12:01:00.000Z passed; claimed by generation 1 (worker w-1); its result arrived late at 2040-06-01T12:01:03.000Z and is kept as late evidence',
    );
    const released = subtask({ generation: 2, workerId: 'w-2', releasedAt: '2040-06-01T12:00:50.000Z' });
    expect(sealReason(released, [late(1, '2040-06-01T12:01:04.000Z')])).toBe(
      'deadline 2040-06-01T12:01:00.000Z passed; generation 2 (worker w-2) released its claim without a result; a result of generation 1 arrived late at 2040-06-01T12:01:04.000Z and is kept as late evidence',
    );
    const cancelled = subtask({ state: 'cancelled', generation: 1, workerId: 'w-1', closedBy: 'cancel', closedAt: '2040-06-01T12:00:30.000Z' });
    expect(toSubtaskView(cancelled, [late(1, '2040-06-01T12:00:31.000Z')]).reason).toBe(
      'run cancelled at 2040-06-01T12:00:30.000Z; claimed by generation 1 (worker w-1); its result arrived late at 2040-06-01T12:00:31.000Z and is kept as late evidence',
    );
  });

  it('say how the run closed a subtask it cancelled', () => {
    expect(closeReason(subtask({ state: 'cancelled', closedBy: 'run_failed', closedAt: '2040-06-01T12:00:40.000Z' }))).toBe(
      'run ended failed at 2040-06-01T12:00:40.000Z; never claimed',
    );
  });
});

describe('views', () => {
  it('flag an empty outcome with no source reached as an unreachable source', () => {
    const empty = subtask({
      state: 'empty',
      generation: 1,
      callsLeft: 3,
      costLeft: 21,
      outcome: {
        state: 'empty',
        observed: { minDate: null, maxDate: null, recordCount: 0 },
        sources: [],
        sourcesReached: 0,
        reason: 'no source was reachable',
        refusals: [],
      },
    });
    expect(toOutcome(empty)).toEqual({
      subtaskId: 'C',
      state: 'empty',
      observed: { minDate: null, maxDate: null, recordCount: 0 },
      sources: [],
      sourcesReached: 0,
      usage: { modelCalls: 1, estimatedCost: 7 },
      reason: 'no source was reachable',
      refusals: [],
    });
    const resource = toRunResource({
      run: {
        pk: 'T#acme#R#r-1',
        sk: 'RUN',
        entity: 'run',
        tenantId: 'acme',
        runId: 'r-1',
        status: 'running',
        requestHash: 'sha256:test',
        createdAt: '2040-06-01T12:00:00.000Z',
        updatedAt: '2040-06-01T12:00:30.000Z',
        callsLimit: 40,
        costLimit: 500,
        callsLeft: 39,
        costLeft: 493,
        round: 1,
        roundSizes: [1],
      },
      meta: {
        pk: 'T#acme#R#r-1',
        sk: 'META',
        entity: 'meta',
        goal: 'Total deductible household expenses for tax year 2025',
        universe: { dimension: 'time', from: '2025-07-01', toExclusive: '2025-10-01' },
        request: {
          goal: 'Total deductible household expenses for tax year 2025',
          universe: { dimension: 'time', from: '2025-07-01', toExclusive: '2025-10-01' },
          split: {
            worker: 'tax-statements',
            parts: 1,
            questionIds: [],
            required: false,
            deadlineSeconds: 60,
            budget: { modelCalls: 4, estimatedCostPerCall: 7 },
          },
          policy: { retry: { timed_out: 1, invalid: 1, empty: 0 }, onRequiredGap: 'fail', onOptionalGap: 'degrade', maxRounds: 2 },
          budget: { modelCalls: 40, costLimit: 500 },
        },
        createdAt: '2040-06-01T12:00:00.000Z',
      },
      subtasks: [empty],
      late: [],
      uncommitted: [],
    });
    expect(resource.subtasks[0]).toMatchObject({ state: 'empty', sourceUnreachable: true, usage: { modelCalls: 1, estimatedCost: 7 } });
    expect(resource.progress).toEqual({
      dispatched: 1,
      terminal: 1,
      byState: { pending: 0, running: 0, ok: 0, timed_out: 0, invalid: 0, empty: 1, cancelled: 0 },
    });
    expect(resource.usage).toEqual({ modelCalls: 1, estimatedCost: 7 });
  });
});

describe('expressions', () => {
  it('derive names and send only the values the expressions use', () => {
    expect(expressions({ condition: '#state = :running' }, { ':running': 'running', ':unused': 1 })).toEqual({
      ConditionExpression: '#state = :running',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':running': 'running' },
    });
    expect(() => expressions({ update: 'SET #a = :missing' }, {})).toThrow('ledger expression uses :missing without a value');
  });
});

describe('conflict retries', () => {
  const conflict = () => Object.assign(new Error('busy'), { name: 'TransactionConflictException' });
  const policy = { attempts: 3, baseDelayMs: 0, maxDelayMs: 0 };

  it('retry a write that lost a race and give up with WriteConflict after the last attempt', async () => {
    let calls = 0;
    await expect(retryConflicts(policy, { operation: 'test' }, async () => (++calls < 3 ? Promise.reject(conflict()) : 'done'))).resolves.toBe('done');
    expect(calls).toBe(3);
    const giveUp = retryConflicts(policy, { operation: 'reserveBudget', runId: 'r-1' }, () => Promise.reject(conflict()));
    await expect(giveUp).rejects.toBeInstanceOf(WriteConflict);
    await expect(giveUp).rejects.toMatchObject({ attempts: 3, runId: 'r-1', cause: expect.objectContaining({ name: 'TransactionConflictException' }) });
    // A Step Functions task that fails with it retries: the name is in the state machine's retry list.
    expect(TRANSIENT_ERRORS).toContain(((await giveUp.catch((error: unknown) => error)) as Error).name);
  });

  it('do not retry other failures', async () => {
    let calls = 0;
    const refused = Object.assign(new Error('no'), { name: 'ConditionalCheckFailedException' });
    await expect(retryConflicts(policy, { operation: 'test' }, () => (calls++, Promise.reject(refused)))).rejects.toBe(refused);
    expect(calls).toBe(1);
  });
});

describe('createLedger', () => {
  it('refuses a document client that would choke on optional attributes', () => {
    const plain = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
    expect(() => createLedger({ client: plain, tableName: 'ledger' })).toThrow(LedgerConfigurationError);
  });
});
