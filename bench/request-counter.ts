import { Agent, createServer, request as forwardRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

/**
 * A transparent HTTP proxy that counts the AWS requests passing through it, for benchmarks that
 * turn counted calls into a cost model. It forwards every request byte for byte (method, path,
 * headers, `Host` included, body) and streams the answer back unchanged, so the emulator behind it
 * cannot tell it is there: fauxqs, for instance, names queues after the `Host` it was called on.
 * It knows the AWS JSON protocols' shapes (which list in a request or answer holds the items),
 * never what the calls mean to tessera.
 */

/** Requests of one operation so far. */
export interface OperationCount {
  readonly requests: number;
  /** Answers with a status of 400 or more, or none at all (refused conditional writes are billed like accepted ones). */
  readonly errors: number;
  /** Items the requests touched: entries of a transaction or batch, items a Query returned, messages received; 1 otherwise. */
  readonly items: number;
  /** Bytes of the answers' bodies, for read-capacity estimates. */
  readonly responseBytes: number;
  /** `ReceiveMessage` only: answers that carried at least one message (the rest were empty polls). */
  readonly nonEmpty?: number;
}

/** One request and its answer, in the order the answers completed. */
export interface Exchange {
  readonly operation: string;
  /** The answer's status; 0 when the caller hung up first, 502 when the target could not be reached. */
  readonly status: number;
  readonly items: number;
  readonly requestBytes: number;
  readonly responseBytes: number;
  /** `ReceiveMessage` only: whether the answer carried messages. */
  readonly nonEmpty?: boolean;
  /** The bodies themselves, kept only with `keepBodies`. */
  readonly requestBody?: Buffer;
  readonly responseBody?: Buffer;
}

export interface RequestCounterOptions {
  /** The endpoint to forward to, such as DynamoDB Local's `http://127.0.0.1:8000`. */
  readonly target: string;
  /** Port on 127.0.0.1; a free one when left out. */
  readonly port?: number;
  /** Keep every request's and answer's body in {@link RequestCounter.exchanges}. @default false */
  readonly keepBodies?: boolean;
}

/** A running counter. */
export interface RequestCounter {
  /** `http://127.0.0.1:<port>`: give this to clients instead of the target. */
  readonly endpoint: string;
  readonly port: number;
  /** Counts by operation (the part of `X-Amz-Target` after the dot: `TransactWriteItems`, `ReceiveMessage`). */
  counts(): Record<string, OperationCount>;
  /**
   * Every completed exchange since start or the last `reset()`. They are kept until `reset()`, so
   * long-lived counters should reset between measurements (an idle SQS poller makes several a second).
   */
  exchanges(): readonly Exchange[];
  /** Forgets everything counted so far; requests in flight are counted when they complete. */
  reset(): void;
  /** Closes the server and every open connection, long polls included. Safe to call twice. */
  stop(): Promise<void>;
}

/** Lists in AWS JSON-protocol bodies whose length is the number of items a call touches. */
const Listed = z.looseObject({
  TransactItems: z.array(z.unknown()).optional(),
  Entries: z.array(z.unknown()).optional(),
  // BatchWriteItem: table → write requests; BatchGetItem: table → { Keys }.
  RequestItems: z.record(z.string(), z.union([z.array(z.unknown()), z.looseObject({ Keys: z.array(z.unknown()) })])).optional(),
  Messages: z.array(z.unknown()).optional(),
  Count: z.number().optional(),
});
type Listed = z.infer<typeof Listed>;

const parseJson = (body: Buffer): Listed | undefined => {
  if (body.length === 0) return undefined;
  try {
    const parsed = Listed.safeParse(JSON.parse(body.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // Not JSON (an XML error page, a gzip body): the call still counts, as one item.
    return undefined;
  }
};

const batchSize = (requestItems: NonNullable<Listed['RequestItems']>): number =>
  Object.values(requestItems).reduce<number>((sum, entry) => sum + (Array.isArray(entry) ? entry.length : entry.Keys.length), 0);

/**
 * Items one call touched: the entries the request lists (`TransactItems`, `RequestItems` of a
 * batch, SQS batch `Entries`), else what a variable-size read returned (`Count` of a Query or
 * Scan, the messages of a ReceiveMessage, none when it came back empty), else 1.
 */
const itemsOf = (operation: string, request: Listed | undefined, response: Listed | undefined): number => {
  if (request?.TransactItems) return request.TransactItems.length;
  if (request?.RequestItems) return batchSize(request.RequestItems);
  if (request?.Entries) return request.Entries.length;
  if (response?.Count !== undefined) return response.Count;
  // An empty ReceiveMessage answer is `{}` (or no body at all after an error).
  if (operation === 'ReceiveMessage') return response?.Messages?.length ?? 0;
  return 1;
};

/**
 * The operation a request names: `X-Amz-Target` (`DynamoDB_20120810.GetItem` → `GetItem`), or the
 * query protocol's `Action` form field, or `unknown`.
 */
const operationOf = (headers: IncomingMessage['headers'], body: Buffer): string => {
  const target = headers['x-amz-target'];
  if (typeof target === 'string' && target.length > 0) return target.slice(target.lastIndexOf('.') + 1);
  if (String(headers['content-type'] ?? '').includes('x-www-form-urlencoded')) {
    return new URLSearchParams(body.toString('utf8')).get('Action') ?? 'unknown';
  }
  return 'unknown';
};

const readBody = (request: IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });

interface Forwarding {
  readonly target: URL;
  readonly agent: Agent;
  readonly keepBodies: boolean;
  readonly record: (exchange: Exchange) => void;
}

const exchangeOf = (forwarding: Forwarding, operation: string, requestBody: Buffer, status: number, responseBody: Buffer): Exchange => {
  const response = status === 0 ? undefined : parseJson(responseBody);
  const receive = operation === 'ReceiveMessage' && status === 200;
  return {
    operation,
    status,
    items: itemsOf(operation, parseJson(requestBody), response),
    requestBytes: requestBody.length,
    responseBytes: responseBody.length,
    ...(receive ? { nonEmpty: (response?.Messages?.length ?? 0) > 0 } : {}),
    ...(forwarding.keepBodies ? { requestBody, responseBody } : {}),
  };
};

/** Sends one request on unchanged and streams the answer back, recording it once it completes or fails. */
const forward = async (forwarding: Forwarding, request: IncomingMessage, response: ServerResponse): Promise<void> => {
  const body = await readBody(request);
  const operation = operationOf(request.headers, body);
  const chunks: Buffer[] = [];
  let recorded = false;
  const settle = (status: number): void => {
    if (recorded) return;
    recorded = true;
    forwarding.record(exchangeOf(forwarding, operation, body, status, Buffer.concat(chunks)));
  };
  const upstream = forwardRequest({
    host: forwarding.target.hostname,
    port: forwarding.target.port,
    method: request.method,
    path: request.url,
    headers: request.headers,
    agent: forwarding.agent,
  });
  upstream.once('response', (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
    answer.on('data', (chunk: Buffer) => chunks.push(chunk));
    // Registered before pipe() so the exchange is counted before the caller sees the end of the answer.
    answer.once('end', () => settle(answer.statusCode ?? 502));
    // The target dropped the connection halfway through its answer: the caller must see a broken answer, not a short one.
    answer.once('error', (error) => {
      settle(0);
      response.destroy(error);
    });
    answer.pipe(response);
  });
  upstream.once('error', (error) => {
    settle(response.headersSent ? 0 : 502);
    if (response.headersSent) response.destroy(error);
    else response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `request counter: ${error.message}` }));
  });
  // A caller that hangs up (an aborted long poll) must not leave the target's request open.
  response.once('close', () => {
    if (!response.writableFinished) {
      settle(0);
      upstream.destroy();
    }
  });
  upstream.end(body);
};

const emptyCount = (): OperationCount => ({ requests: 0, errors: 0, items: 0, responseBytes: 0 });

const counted = (previous: OperationCount, exchange: Exchange): OperationCount => ({
  requests: previous.requests + 1,
  errors: previous.errors + (exchange.status === 0 || exchange.status >= 400 ? 1 : 0),
  items: previous.items + exchange.items,
  responseBytes: previous.responseBytes + exchange.responseBytes,
  ...(exchange.nonEmpty === undefined && previous.nonEmpty === undefined ? {} : { nonEmpty: (previous.nonEmpty ?? 0) + (exchange.nonEmpty ? 1 : 0) }),
});

const listen = (server: Server, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

/**
 * Starts a counting proxy on 127.0.0.1 in front of `target`.
 *
 * @example
 * const counter = await startRequestCounter({ target: ddb.endpoint });
 * const client = new DynamoDBClient({ endpoint: counter.endpoint, region: 'us-east-1' });
 * // … calls …
 * counter.counts().TransactWriteItems // { requests: 2, errors: 0, items: 6, responseBytes: 4 }
 * await counter.stop();
 */
export const startRequestCounter = async (options: RequestCounterOptions): Promise<RequestCounter> => {
  let exchanges: Exchange[] = [];
  let counts = new Map<string, OperationCount>();
  const record = (exchange: Exchange): void => {
    exchanges.push(exchange);
    counts.set(exchange.operation, counted(counts.get(exchange.operation) ?? emptyCount(), exchange));
  };
  const agent = new Agent({ keepAlive: true });
  const forwarding: Forwarding = { target: new URL(options.target), agent, keepBodies: options.keepBodies ?? false, record };
  const server = createServer((request, response) => {
    forward(forwarding, request, response).catch((error: unknown) => {
      // Only reading the caller's body can fail here; the caller has gone, so there is no one to answer.
      response.destroy(error instanceof Error ? error : undefined);
    });
  });
  // As the local cloud's own servers do (http-server.ts): no idle close racing a kept-alive request.
  server.keepAliveTimeout = 0;
  const port = await listen(server, options.port ?? 0);
  let stopping: Promise<void> | undefined;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    counts: () => Object.fromEntries(counts),
    exchanges: () => [...exchanges],
    reset: () => {
      exchanges = [];
      counts = new Map();
    },
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      })),
  };
};
