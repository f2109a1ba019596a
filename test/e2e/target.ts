import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { z } from 'zod';
import { createTesseraClient, type TesseraClient } from '../../lib/client';
import { RunRequest, type RunRequestInput, type RunResource, type SubtaskView } from '../../lib/contract';
import { SubtaskMessage } from '../../lib/queue/message';

/** What the suite runs against: the local cloud or a deployed stack (test/e2e/global-setup.ts). */
export const target = () => inject('e2e');

/** A client of the API under test, as tenant `acme` (default) or `globex`. */
export const client = (tenant: 'acme' | 'globex' = 'acme'): TesseraClient => createTesseraClient({ apiUrl: target().apiUrl, token: target().tokens[tenant] });

/** An example request from examples/, parsed as a caller would send it. */
export const example = (name: string): RunRequestInput => {
  const body: unknown = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'examples', `${name}.json`), 'utf8'));
  // The examples are well-formed requests (a plan may still be rejected by the API: that is the test).
  const checked = RunRequest.safeParse(body);
  if (!checked.success) throw new Error(`examples/${name}.json is not a run request: ${checked.error.message}`);
  return body as RunRequestInput;
};

/** Submits a request and waits for the run to end. */
export const runToEnd = async (request: RunRequestInput, tenant: 'acme' | 'globex' = 'acme'): Promise<RunResource> => {
  const tessera = client(tenant);
  const { runId } = await tessera.createRun(request);
  return tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 120_000 });
};

export const subtask = (run: RunResource, id: string): SubtaskView => {
  const found = run.subtasks.find((s) => s.id === id);
  if (!found) throw new Error(`run ${run.runId} has no subtask ${id}: ${run.subtasks.map((s) => s.id).join(', ')}`);
  return found;
};

/** Polls until `check` passes on the run, for facts that settle after the run ends (late results). */
export const eventually = async (runId: string, check: (run: RunResource) => boolean, timeoutMs = 20_000): Promise<RunResource> => {
  const started = Date.now();
  for (;;) {
    const run = await client().getRun(runId);
    if (check(run)) return run;
    if (Date.now() - started > timeoutMs) return run;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

const sqsClient = (): SQSClient => {
  const { endpoint, region } = target().sqs;
  // Locally, queue URLs name fauxqs's `sqs.<region>.localhost` host, which only the local cloud's
  // own process resolves; talk to the endpoint itself instead.
  return new SQSClient({
    region,
    ...(endpoint ? { endpoint, useQueueUrlAsEndpoint: false, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
};

/**
 * Delivers a subtask message exactly as Dispatch does: the duplicate delivery SQS is allowed to
 * make. Only tenant, run and subtask travel in a message; the assignment stays in the ledger.
 */
export const deliverAgain = async (worker: string, message: SubtaskMessage): Promise<void> => {
  const urls = z.record(z.string(), z.string()).parse(JSON.parse(target().outputs.SubtaskQueueUrls));
  const url = urls[worker];
  if (!url) throw new Error(`no queue for ${worker} in SubtaskQueueUrls`);
  await sqsClient().send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(message) }));
};

/**
 * Subtask messages of one run that reached the dead-letter queue (received, not deleted). Other
 * runs' messages share the queue (the chaos suite dead-letters many), so it reads page after page;
 * each page stays hidden for a few seconds so the next one shows other messages.
 */
export const deadLettered = async (runId: string): Promise<SubtaskMessage[]> => {
  const found: SubtaskMessage[] = [];
  for (let page = 0; page < 20; page += 1) {
    const received = await sqsClient().send(
      new ReceiveMessageCommand({
        QueueUrl: target().outputs.DeadLetterQueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: page === 0 ? 1 : 0,
        VisibilityTimeout: 5,
      }),
    );
    const messages = (received.Messages ?? []).flatMap((m) => {
      const parsed = SubtaskMessage.safeParse(JSON.parse(m.Body ?? '{}'));
      return parsed.success ? [parsed.data] : [];
    });
    found.push(...messages.filter((m) => m.runId === runId));
    if (found.length > 0 || messages.length === 0) return found;
  }
  return found;
};
