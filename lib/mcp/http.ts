import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/**
 * One MCP request over Streamable HTTP, statelessly: a fresh server and transport per request, no
 * session id, and the answer read to its end before it is returned. A Lambda function can serve it:
 * nothing is kept between requests, and progress notifications travel in the same answer (an SSE
 * stream that closes with the tool's result).
 *
 * A GET (the optional stream of server-initiated messages) is answered 405: a stateless server
 * has nothing to send outside a request, and a Lambda cannot hold a stream open.
 *
 * @example
 * const response = await answerMcpRequest(request, () => createTesseraMcpServer({ client, plan }));
 */
export const answerMcpRequest = async (request: Request, newServer: () => McpServer): Promise<Response> => {
  if (request.method !== 'POST') {
    const body = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; send POST' }, id: null };
    return Response.json(body, { status: 405, headers: { allow: 'POST' } });
  }
  const server = newServer();
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(request);
    // The SSE stream ends once every request of the POST has its answer.
    const body = response.body === null ? null : await response.text();
    return new Response(body, { status: response.status, headers: response.headers });
  } finally {
    await server.close();
  }
};
