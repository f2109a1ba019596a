import type { ErrorBody } from '../contract';

/** A non-2xx answer from the tessera API, with its parsed error body when it had one. */
export class TesseraApiError extends Error {
  override readonly name = 'TesseraApiError';
  constructor(
    readonly status: number,
    readonly body: ErrorBody | { message?: string } | undefined,
    readonly operation: string,
  ) {
    const detail = body && 'error' in body ? `${body.error.code}: ${body.error.message}` : (body as { message?: string } | undefined)?.message;
    super(`${operation} answered ${status}${detail ? ` (${detail})` : ''}`);
  }

  /** The precise problems of a 400, as the API lists them. */
  get issues(): NonNullable<ErrorBody['error']['issues']> {
    return this.body && 'error' in this.body ? (this.body.error.issues ?? []) : [];
  }
}

/** The run did not end within the time the caller was willing to wait. */
export class RunWaitTimeout extends Error {
  override readonly name = 'RunWaitTimeout';
  constructor(readonly runId: string, readonly waitedMs: number) {
    super(`run ${runId} was still running after ${Math.round(waitedMs / 1000)} s`);
  }
}
