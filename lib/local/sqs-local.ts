import { buildApp } from 'fauxqs';

/** A running SQS emulator (fauxqs), bound to 127.0.0.1, speaking the AWS JSON protocol. */
export interface SqsLocal {
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts fauxqs in this process on 127.0.0.1. fauxqs's own `startFauxqs` listens on 0.0.0.0,
 * so this builds its app and listens on loopback instead.
 *
 * @example
 * const sqs = await startSqsLocal();
 * const client = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1' });
 */
export const startSqsLocal = async (options: { port?: number; region?: string } = {}): Promise<SqsLocal> => {
  const app = buildApp({ logger: false, defaultRegion: options.region ?? 'us-east-1' });
  const address = await app.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const port = Number(new URL(address).port);
  return { endpoint: `http://127.0.0.1:${port}`, port, stop: async () => void (await app.close()) };
};
