/**
 * A local STS endpoint that answers AssumeRole the way STS does on the wire (the Query protocol:
 * a form-encoded POST, an XML answer), for the integration test of the tenant credential cache.
 * Nothing in the local cloud emulates STS, and the tests need to count the calls and choose the
 * expiry: each AssumeRole is recorded with its role, session name and session policy, and its
 * credentials expire `sessionSeconds` after the instant of the test's clock.
 *
 * Every session gets the access key `local`, the one the tests create their tables with:
 * DynamoDB Local keeps a separate database per access key, so a key of its own would find no
 * table. Sessions differ by their session token (`token-<n>`, numbered in order), which each
 * signed request carries in `x-amz-security-token`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One AssumeRole the endpoint answered. */
export interface AssumeRoleCall {
  readonly roleArn: string;
  readonly sessionName: string;
  readonly policy: string | undefined;
  readonly durationSeconds: number;
  /** The clock's instant when it was answered, and the expiry it handed out. */
  readonly at: number;
  readonly expiration: string;
}

export interface LocalSts {
  readonly endpoint: string;
  readonly calls: AssumeRoleCall[];
  stop(): Promise<void>;
}

const xmlEscape = (text: string): string => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** Starts the endpoint on 127.0.0.1 with a free port; `now` is the clock its expiries start from. */
export const startLocalSts = async (now: () => number): Promise<LocalSts> => {
  const calls: AssumeRoleCall[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      if (form.get('Action') !== 'AssumeRole') {
        response.writeHead(400, { 'content-type': 'text/xml' }).end(`<ErrorResponse><Error><Code>InvalidAction</Code></Error></ErrorResponse>`);
        return;
      }
      const durationSeconds = Number(form.get('DurationSeconds') ?? 3600);
      const at = now();
      const expiration = new Date(at + durationSeconds * 1000).toISOString();
      const n = calls.length + 1;
      const [roleArn, sessionName] = [form.get('RoleArn') ?? '', form.get('RoleSessionName') ?? ''];
      calls.push({ roleArn, sessionName, policy: form.get('Policy') ?? undefined, durationSeconds, at, expiration });
      response
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
            `<AccessKeyId>local</AccessKeyId><SecretAccessKey>local</SecretAccessKey>` +
            `<SessionToken>token-${n}</SessionToken><Expiration>${expiration}</Expiration></Credentials>` +
            `<AssumedRoleUser><Arn>${xmlEscape(roleArn)}</Arn><AssumedRoleId>AROALOCAL:${xmlEscape(sessionName)}</AssumedRoleId>` +
            `</AssumedRoleUser></AssumeRoleResult><ResponseMetadata><RequestId>local-${n}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
};
