import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { settleBatch, sqsEvent, type SqsEventSourceMapping } from '../../lib/local/event-source-mapping';
import { StatesApiError } from '../../lib/local/errors';
import { proxyResponse } from '../../lib/local/http-api';
import { matchRoute, type HttpRoute } from '../../lib/local/http-routes';
import { findFunction, type LocalFunction } from '../../lib/local/lambda-runtime';
import { readReferencePath } from '../../lib/local/reference-path';
import { createTaskTokens } from '../../lib/local/task-tokens';

const route = (routeKey: string): HttpRoute => {
  const [method, path] = routeKey === '$default' ? ['ANY', ''] : routeKey.split(' ');
  return {
    logicalId: routeKey,
    routeKey,
    method: method as string,
    segments: (path ?? '').split('/').filter(Boolean),
    functionName: 'f',
    integrationTimeoutMs: 30_000,
    auth: { type: 'NONE' },
  };
};

describe('settleBatch: which messages an SQS event source deletes', () => {
  const ids = ['m1', 'm2', 'm3'];

  it('deletes all but the reported failures', () => {
    expect(settleBatch(ids, { ok: true, payload: { batchItemFailures: [{ itemIdentifier: 'm2' }] } }, true)).toEqual({ delete: ['m1', 'm3'], retain: ['m2'] });
  });

  it('treats an empty, absent or null failure list as complete success', () => {
    for (const payload of [{ batchItemFailures: [] }, {}, null, { batchItemFailures: null }]) {
      expect(settleBatch(ids, { ok: true, payload }, true)).toEqual({ delete: ids, retain: [] });
    }
  });

  it('fails the whole batch on an invalid response', () => {
    for (const payload of [
      'ok',
      [1],
      { batchItemFailures: [{ itemIdentifier: '' }] },
      { batchItemFailures: [{ itemIdentifier: 'other' }] },
      { batchItemFailures: 'm1' },
    ]) {
      expect(settleBatch(ids, { ok: true, payload }, true)).toEqual({ delete: [], retain: ids });
    }
  });

  it('deletes nothing when the function failed, and everything on success without ReportBatchItemFailures', () => {
    expect(settleBatch(ids, { ok: false, error: { errorType: 'Error', errorMessage: 'x' } }, true)).toEqual({ delete: [], retain: ids });
    expect(settleBatch(ids, { ok: true, payload: { batchItemFailures: [{ itemIdentifier: 'm1' }] } }, false)).toEqual({ delete: ids, retain: [] });
  });

  it('always splits the batch into disjoint deleted and retained parts', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.uuid(), { minLength: 1, maxLength: 10 }), fc.array(fc.nat()), (batch, picks) => {
        const failures = picks.map((pick) => ({ itemIdentifier: batch[pick % batch.length] as string }));
        const settled = settleBatch(batch, { ok: true, payload: { batchItemFailures: failures } }, true);
        expect([...settled.delete, ...settled.retain].sort()).toEqual([...batch].sort());
        expect(new Set(settled.retain)).toEqual(new Set(failures.map((failure) => failure.itemIdentifier)));
      }),
    );
  });
});

describe('sqsEvent: the Lambda event of an SQS batch', () => {
  it('has the record fields Lambda sends', () => {
    const mapping = { queueArn: 'arn:aws:sqs:eu-west-1:000000000000:Work' } as SqsEventSourceMapping;
    const event = sqsEvent(
      [
        {
          MessageId: 'm1',
          ReceiptHandle: 'r1',
          Body: 'hello',
          MD5OfBody: '5d41402abc4b2a76b9719d911017c592',
          Attributes: { ApproximateReceiveCount: '2', SentTimestamp: '1700000000000', SenderId: 'AIDA', ApproximateFirstReceiveTimestamp: '1700000000100' },
          MessageAttributes: { kind: { DataType: 'String', StringValue: 'tax' } },
        },
      ],
      mapping,
      'eu-west-1',
    );
    expect(event.Records).toEqual([
      {
        messageId: 'm1',
        receiptHandle: 'r1',
        body: 'hello',
        attributes: { ApproximateReceiveCount: '2', SentTimestamp: '1700000000000', SenderId: 'AIDA', ApproximateFirstReceiveTimestamp: '1700000000100' },
        messageAttributes: { kind: { stringValue: 'tax', stringListValues: [], binaryListValues: [], dataType: 'String' } },
        md5OfBody: '5d41402abc4b2a76b9719d911017c592',
        eventSource: 'aws:sqs',
        eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:Work',
        awsRegion: 'eu-west-1',
      },
    ]);
  });
});

describe('matchRoute: API Gateway route selection', () => {
  const routes = ['GET /runs/{runId}', 'POST /runs', 'GET /runs/latest', 'ANY /files/{path+}', 'GET /files/readme', '$default'].map(route);

  it('prefers literal segments, then variables, then greedy paths, then $default', () => {
    expect(matchRoute(routes, 'GET', '/runs/latest')?.route.routeKey).toBe('GET /runs/latest');
    expect(matchRoute(routes, 'GET', '/runs/r-1')).toMatchObject({ route: { routeKey: 'GET /runs/{runId}' }, pathParameters: { runId: 'r-1' } });
    expect(matchRoute(routes, 'GET', '/files/readme')?.route.routeKey).toBe('GET /files/readme');
    expect(matchRoute(routes, 'DELETE', '/files/a/b.txt')).toMatchObject({ route: { routeKey: 'ANY /files/{path+}' }, pathParameters: { path: 'a/b.txt' } });
    expect(matchRoute(routes, 'PUT', '/runs')?.route.routeKey).toBe('$default');
  });

  it('finds nothing for an unknown path without a $default route', () => {
    expect(
      matchRoute(
        routes.filter((candidate) => candidate.routeKey !== '$default'),
        'GET',
        '/nope',
      ),
    ).toBeUndefined();
    expect(
      matchRoute(
        routes.filter((candidate) => candidate.routeKey !== '$default'),
        'POST',
        '/runs/r-1',
      ),
    ).toBeUndefined();
  });

  it('gives back every path parameter it was sent, decoded', () => {
    const segment = fc.string({ minLength: 1, maxLength: 12 }).filter((value) => !value.includes('/'));
    fc.assert(
      fc.property(segment, segment, (runId, subtaskId) => {
        const match = matchRoute(
          [route('GET /runs/{runId}/subtasks/{subtaskId}')],
          'GET',
          `/runs/${encodeURIComponent(runId)}/subtasks/${encodeURIComponent(subtaskId)}`,
        );
        expect(match?.pathParameters).toEqual({ runId, subtaskId });
      }),
    );
  });
});

describe('proxyResponse: mapping a Lambda result to HTTP, payload format 2.0', () => {
  it('passes a structured response through', () => {
    expect(proxyResponse({ ok: true, payload: { statusCode: 201, headers: { 'X-Run': 'r1' }, body: '{"runId":"r1"}' } })).toEqual({
      status: 201,
      headers: { 'x-run': 'r1' },
      body: '{"runId":"r1"}',
    });
  });

  it('turns any other JSON into a 200 application/json body', () => {
    expect(proxyResponse({ ok: true, payload: { tubs: 5, pence: 2500 } })).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"tubs":5,"pence":2500}',
    });
  });

  it('answers 500 for a function error or a malformed response', () => {
    const internal = { status: 500, headers: { 'content-type': 'application/json' }, body: '{"message":"Internal Server Error"}' };
    expect(proxyResponse({ ok: false, error: { errorType: 'Error', errorMessage: 'x' } })).toEqual(internal);
    expect(proxyResponse({ ok: true, payload: { statusCode: 'two hundred' } })).toEqual(internal);
  });

  it('decodes a base64 body', () => {
    expect(proxyResponse({ ok: true, payload: { statusCode: 200, body: Buffer.from('tessera').toString('base64'), isBase64Encoded: true } }).body).toEqual(
      Buffer.from('tessera'),
    );
  });
});

describe('readReferencePath', () => {
  it('reads input and context paths as the States language defines them', () => {
    const input = { Payload: { timeoutSeconds: 30, items: [{ id: 'a' }] }, 'odd key': 1 };
    expect(readReferencePath('$.Payload.timeoutSeconds', input, {})).toBe(30);
    expect(readReferencePath("$.Payload.items[0]['id']", input, {})).toBe('a');
    expect(readReferencePath("$['odd key']", input, {})).toBe(1);
    expect(readReferencePath('$$.Execution.Name', input, { Execution: { Name: 'run-1' } })).toBe('run-1');
    expect(readReferencePath('$.Payload.missing', input, {})).toBeUndefined();
    expect(readReferencePath('$..deep', input, {})).toBeUndefined();
  });
});

describe('findFunction: how Invoke names a function', () => {
  const fn = { name: 'Dispatch', arn: 'arn:aws:lambda:eu-west-1:000000000000:function:Dispatch' } as LocalFunction;

  it('accepts a name, an ARN, a partial ARN and $LATEST; not other qualifiers', () => {
    for (const name of ['Dispatch', fn.arn, '000000000000:function:Dispatch', `${fn.arn}:$LATEST`]) expect(findFunction([fn], name)).toBe(fn);
    expect(findFunction([fn], 'Dispatch', 'prod')).toBeUndefined();
    expect(findFunction([fn], 'Other')).toBeUndefined();
  });
});

describe('task tokens', () => {
  afterEach(() => vi.useRealTimers());
  const owner = { executionArn: 'arn:aws:states:eu-west-1:000000000000:execution:Flow:run-1', stateName: 'Await' };

  it('hands SendTaskSuccess output to the waiting Task, once', async () => {
    const tokens = createTaskTokens();
    const { token, settled } = tokens.open(owner, 60_000);
    tokens.succeed(token, '{"state":"ok"}');
    await expect(settled).resolves.toEqual({ state: 'ok' });
    expect(() => tokens.succeed(token, '{}')).toThrow(expect.objectContaining({ code: 'TaskTimedOut' }));
  });

  it('fails the Task with the error name of SendTaskFailure', async () => {
    const tokens = createTaskTokens();
    const { token, settled } = tokens.open(owner, 60_000);
    tokens.fail(token, 'WorkerCrashed', 'lease lost');
    await expect(settled).rejects.toMatchObject({ name: 'WorkerCrashed', message: 'lease lost' });
  });

  it('answers TaskTimedOut after the Task timed out or its execution ended', () => {
    vi.useFakeTimers();
    const tokens = createTaskTokens();
    const first = tokens.open(owner, 5_000);
    const second = tokens.open(owner, 60_000);
    vi.advanceTimersByTime(5_000);
    expect(() => tokens.heartbeat(first.token)).toThrow(expect.objectContaining({ code: 'TaskTimedOut' }));
    tokens.heartbeat(second.token);
    tokens.closeExecution(owner.executionArn);
    expect(() => tokens.succeed(second.token, '{}')).toThrow(expect.objectContaining({ code: 'TaskTimedOut' }));
    expect(tokens.waiting()).toBe(0);
  });

  it('fails the waiting promise when its execution ends, so the Task lets go of its timeout timer; a timeout leaves it to the library', async () => {
    vi.useFakeTimers();
    const tokens = createTaskTokens();
    const timedOut = tokens.open(owner, 5_000);
    let timedOutSettled = false;
    timedOut.settled.then(
      () => (timedOutSettled = true),
      () => (timedOutSettled = true),
    );
    const stopped = tokens.open(owner, 60_000);
    vi.advanceTimersByTime(5_000);
    tokens.closeExecution(owner.executionArn);
    await expect(stopped.settled).rejects.toMatchObject({ name: 'States.Runtime', message: 'the task token was closed: the execution ended' });
    // The library raises States.Timeout itself at the same instant; the token's own promise stays out of that race.
    for (let tick = 0; tick < 10; tick += 1) await Promise.resolve();
    expect(timedOutSettled).toBe(false);
  });

  it('tells an unknown token from a malformed one, and rejects output that is not JSON', () => {
    const tokens = createTaskTokens();
    const { token } = tokens.open(owner, 60_000);
    expect(() => tokens.succeed('tessera-local-unknown', '{}')).toThrow(expect.objectContaining({ code: 'TaskDoesNotExist' }));
    expect(() => tokens.succeed('garbage', '{}')).toThrow(expect.objectContaining({ code: 'InvalidToken' }));
    expect(() => tokens.succeed(token, 'not json')).toThrow(StatesApiError);
    expect(() => tokens.succeed(token, 'not json')).toThrow(expect.objectContaining({ code: 'InvalidOutput' }));
  });
});
