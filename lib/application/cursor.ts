/**
 * Opaque page cursors, shared by `GET /runs` and `GET /runs/{runId}/subtasks`: base64url JSON of
 * a position and a tag of the tenant it was returned to. A cursor carries no secret, so each use
 * case checks the position it names against the ledger before it trusts it.
 */
import { createHash } from 'node:crypto';
import type { z } from 'zod';

/** A problem with one query parameter, as the 400 answer's `issues` lists it. */
export interface QueryProblem {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/** A short digest of the tenant id: a cursor says whose it is without spelling the tenant out. */
export const tenantTag = (tenantId: string): string => createHash('sha256').update(`tessera run list\0${tenantId}`).digest('base64url').slice(0, 16);

/** @example encodeOpaque({ v: 1, r: 'r-1' }) // 'eyJ2IjoxLCJyIjoici0xIn0' */
export const encodeOpaque = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The cursor `text` decodes to under `schema`, or `undefined` when it is not one. */
export const decodeOpaque = <T>(schema: z.ZodType<T>, text: string): T | undefined => {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(text, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

/** @example cursorProblem('was returned to another tenant') // { path: 'cursor', code: 'invalid_cursor', … } */
export const cursorProblem = (message: string): QueryProblem => ({ path: 'cursor', code: 'invalid_cursor', message });
