import type { ErrorBody } from '../contract';

/**
 * Base of the API client's errors; catch it to handle any of them.
 *
 * @example
 * try { await client.getRun(runId); } catch (error) { if (error instanceof ClientError) console.error(error.message); }
 */
export class ClientError extends Error {
  override readonly name: string = 'ClientError';
}

/** A non-2xx answer from the tessera API, with its parsed error body when it had one. */
export class TesseraApiError extends ClientError {
  override readonly name = 'TesseraApiError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody | { message?: string } | undefined,
    readonly operation: string,
    options?: ErrorOptions,
  ) {
    const detail = body && 'error' in body ? `${body.error.code}: ${body.error.message}` : (body as { message?: string } | undefined)?.message;
    super(`${operation} answered ${status}${detail ? ` (${detail})` : ''}`, options);
  }

  /** The precise problems of a 400, as the API lists them. */
  get issues(): NonNullable<ErrorBody['error']['issues']> {
    return this.body && 'error' in this.body ? (this.body.error.issues ?? []) : [];
  }
}

/** The run did not end within the time the caller was willing to wait. */
export class RunWaitTimeout extends ClientError {
  override readonly name = 'RunWaitTimeout';
  constructor(
    readonly runId: string,
    readonly waitedMs: number,
    options?: ErrorOptions,
  ) {
    super(`run ${runId} was still running after ${Math.round(waitedMs / 1000)} s`, options);
  }
}
