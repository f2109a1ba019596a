import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server of the local cloud, listening on 127.0.0.1 only. */
export interface LoopbackServer {
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, ends open ones and resolves when closed. Safe to call twice. */
  close(): Promise<void>;
}

/** What a request handler answers. `body` is sent as is: a string, bytes or nothing. */
export interface HttpReply {
  readonly status: number;
  /** Header names in lower case; a list sends the header once per value (`set-cookie`). */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Uint8Array;
}

/** Answers one request whose body has been read. */
export type RequestHandler = (request: IncomingMessage, body: Buffer) => Promise<HttpReply>;

/** API Gateway's payload limit, 10 MB. (Lambda's own, 6 MB, is the integration's to answer.) */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/** API Gateway's answer to a larger body: 413 with its JSON message shape. */
const tooLarge = (): HttpReply => jsonReply(413, { message: 'Request Entity Too Large' }, { connection: 'close' });

/**
 * The request body, or `'too-large'` once it passes `MAX_BODY_BYTES`. The rest of a body that is
 * too large is read and dropped rather than the socket destroyed, so the client gets the 413
 * instead of a reset connection in the middle of its upload.
 */
const readBody = (request: IncomingMessage): Promise<Buffer | 'too-large'> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else chunks.length = 0;
    });
    request.once('end', () => resolve(size > MAX_BODY_BYTES ? 'too-large' : Buffer.concat(chunks)));
    request.once('error', reject);
  });

const send = (response: ServerResponse, reply: HttpReply): void => {
  const body = reply.body ?? '';
  const headers: Record<string, string | string[]> = { 'content-length': String(Buffer.byteLength(body)) };
  for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name] = typeof value === 'string' ? value : [...value];
  response.writeHead(reply.status, headers);
  response.end(body);
};

/**
 * A JSON reply with the given status.
 *
 * @example
 * jsonReply(404, { message: 'Not Found' })
 */
export const jsonReply = (status: number, value: unknown, headers: HttpReply['headers'] = {}, contentType = 'application/json'): HttpReply => ({
  status,
  headers: { 'content-type': contentType, ...headers },
  body: JSON.stringify(value),
});

/**
 * Starts an HTTP server on 127.0.0.1 (port 0 picks a free one). A handler that throws answers
 * 500 and is reported to `onError`, so one bad request never takes the server down; a body over
 * `MAX_BODY_BYTES` is answered 413 without calling the handler.
 *
 * @example
 * const server = await listenOnLoopback(async () => jsonReply(200, { ok: true }));
 * await fetch(server.url); await server.close();
 */
export const listenOnLoopback = async (
  handler: RequestHandler,
  options: { port?: number; onError?: (error: unknown) => void } = {},
): Promise<LoopbackServer> => {
  const server: Server = createServer((request, response) => {
    readBody(request)
      .then((body) => (body === 'too-large' ? tooLarge() : handler(request, body)))
      .then((reply) => send(response, reply))
      .catch((error: unknown) => {
        options.onError?.(error);
        if (!response.headersSent) send(response, jsonReply(500, { message: 'Internal Server Error' }));
      });
  });
  // Node closes a keep-alive connection after 5 idle seconds by default. A client (the AWS SDK
  // keeps its sockets alive) that sends on such a socket as it closes gets ECONNRESET or "socket
  // hang up" with nothing answered. On loopback an idle connection costs nothing, so they are
  // kept until `close()` ends them all, and a request is never raced against its socket's close.
  server.keepAliveTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
};
