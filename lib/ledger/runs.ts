/**
 * Runs: idempotent creation, the full read behind `GET /runs/{runId}`, and the manifest read
 * that reconcile trusts.
 */
import { RunRequest, type Manifest, type Outcome, type RunRequestInput, type SynthesisRequest } from '../contract';
import { contentHash } from './canonical';
import { splitCopies } from './hedges';
import { IdempotencyConflict, ImmutableAssignment, ManifestIncomplete, RequestTooLarge, RunNotFound, type LedgerErrorContext } from './errors';
import { completeParts, partPuts, partsPrefix, spill, unspill, withParts, type Spilled } from './parts';
import { MAX_RUN_REQUEST_BYTES, requestSize } from './size';
import { CreateRunInput, parseInput } from './inputs';
import { getItem, iso, mapLimit, queryPartition, transact, type LedgerContext, type LedgerTransactItem } from './io';
import { IdempotencyItem, LateItem, MetaItem, parseItem, RunItem, SubtaskItem } from './items';
import { cancellationReasons, conditionFailed, type CancellationReason } from './failures';
import { idempotencyKey, metaKey, runKey, runPartition, shardCount, shardPartitions, SORT_KEYS } from './keys';
import { rememberShards, SHARD_READS } from './shards';
import { asRunDecides, dispatchedSubtasks, isTerminal, toOutcome, type RunPageRecord, type RunRecord } from './view';
import { committedProgress, summaryItem } from './summary';
import { firstSubtaskPage } from './subtask-pages';

/** How long an `Idempotency-Key` is remembered. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

/**
 * The hash that decides "same request": canonical JSON of the request after its defaults are
 * applied, so key order, whitespace and spelled-out defaults do not make a retry conflict.
 *
 * @example
 * hashRequest(body) === hashRequest(JSON.parse(JSON.stringify(body))) // true
 */
export const hashRequest = (request: RunRequestInput | RunRequest): string => contentHash(RunRequest.parse(request));

/** Result of `createRun`: the run (new or the one the key already named) and whether this call created it. */
export interface CreatedRun {
  readonly run: RunItem;
  readonly created: boolean;
}

const newRunItems = (ctx: LedgerContext, input: ReturnType<typeof CreateRunInput.parse>, requestHash: string): { run: RunItem; meta: MetaItem } => {
  const { tenantId, runId, request } = input;
  const createdAt = input.createdAt === undefined ? iso(ctx.now()) : iso(Date.parse(input.createdAt));
  const shards = shardCount(input.plannedSubtasks ?? 0, ctx.subtasksPerShard);
  const run: RunItem = {
    ...runKey(tenantId, runId),
    entity: 'run',
    tenantId,
    runId,
    status: 'running',
    requestHash,
    ...(input.idempotencyKey === undefined ? {} : { idempotencyKey: input.idempotencyKey }),
    createdAt,
    updatedAt: createdAt,
    callsLimit: request.budget.modelCalls,
    costLimit: request.budget.costLimit,
    callsLeft: request.budget.modelCalls,
    costLeft: request.budget.costLimit,
    ...(shards > 1 ? { shards } : {}),
    round: 0,
    roundSizes: [],
  };
  const meta: MetaItem = {
    ...metaKey(tenantId, runId),
    entity: 'meta',
    goal: request.goal,
    universe: request.universe,
    request,
    ...(input.plan === undefined ? {} : { plan: input.plan }),
    createdAt,
  };
  return { run, meta };
};

/**
 * The run description as stored: a large request goes to parts, and then the universe is not
 * stored a second time (it is `request.universe`; {@link metaFromStored} puts it back).
 */
const storedMeta = (meta: MetaItem): Spilled<Record<string, unknown> & { pk: string }> => {
  const spilled = spill<Record<string, unknown> & { pk: string }>(meta, ['request', 'plan'], (name) => partsPrefix(SORT_KEYS.meta, name));
  if (spilled.item.requestParts === undefined) return spilled;
  const { universe: _universe, ...item } = spilled.item;
  return { item, parts: spilled.parts };
};

/** The run description from its stored image and the partition's parts. */
const metaFromStored = (image: Record<string, unknown> | undefined, items: readonly Record<string, unknown>[], context: LedgerErrorContext): MetaItem => {
  if (image === undefined) return parseItem(MetaItem, image, context);
  const whole = unspill(image, items, context);
  const request = whole.request as { universe?: unknown } | undefined;
  return parseItem(MetaItem, whole.universe === undefined ? { ...whole, universe: request?.universe } : whole, context);
};

/** Refuses a request over {@link MAX_RUN_REQUEST_BYTES}, naming its largest field, before anything is written. */
const checkRequestSize = (input: ReturnType<typeof CreateRunInput.parse>): void => {
  const size = requestSize(input.request);
  if (size.bytes > MAX_RUN_REQUEST_BYTES) {
    throw new RequestTooLarge({
      tenantId: input.tenantId,
      runId: input.runId,
      field: size.field,
      bytes: size.bytes,
      fieldBytes: size.fieldBytes,
      limit: MAX_RUN_REQUEST_BYTES,
    });
  }
};

const idempotencyPut = (ctx: LedgerContext, input: ReturnType<typeof CreateRunInput.parse>, key: string, requestHash: string): LedgerTransactItem => {
  const nowSeconds = Math.floor(ctx.now() / 1000);
  const item: IdempotencyItem = {
    ...idempotencyKey(input.tenantId, key),
    entity: 'idempotency',
    runId: input.runId,
    requestHash,
    createdAt: iso(ctx.now()),
    ttl: nowSeconds + IDEMPOTENCY_TTL_SECONDS,
  };
  // TTL deletion lags (up to days), so an expired record counts as absent.
  return { kind: 'put', item, condition: 'attribute_not_exists(#pk) OR #ttl < :nowSeconds', values: { ':nowSeconds': nowSeconds } };
};

/**
 * Creates a run, idempotently. The run control item, its description and the idempotency record
 * are written in one transaction; if the key (or the run id) is already taken, the stored
 * request hash decides: the same request returns the existing run (`created: false`), another
 * request throws `IdempotencyConflict`.
 */
export const createRun = async (ctx: LedgerContext, raw: CreateRunInput): Promise<CreatedRun> => {
  const input = parseInput(CreateRunInput, raw, 'createRun');
  checkRequestSize(input);
  const requestHash = input.requestHash ?? contentHash(input.request);
  const { run, meta } = newRunItems(ctx, input, requestHash);
  const stored = storedMeta(meta);
  const items: LedgerTransactItem[] = [
    { kind: 'put', item: run, condition: 'attribute_not_exists(#pk)' },
    { kind: 'put', item: stored.item, condition: 'attribute_not_exists(#pk)' },
  ];
  // The summary goes after the key (whose reason is read by position) and before the parts.
  const summary: LedgerTransactItem = { kind: 'put', item: summaryItem(run, meta.goal), condition: 'attribute_not_exists(#pk)' };
  if (input.idempotencyKey !== undefined) items.push(idempotencyPut(ctx, input, input.idempotencyKey, requestHash));
  items.push(summary);
  // Parts go last (the reasons above are read by position) and in the same transaction: a run is
  // either there with its whole description or not there at all.
  items.push(...partPuts(stored.parts));
  const context = { tenantId: input.tenantId, runId: input.runId };
  try {
    await transact(ctx, { operation: 'createRun', ...context }, items);
    rememberShards(ctx, input.tenantId, input.runId, run.shards ?? 1);
    return { run, created: true };
  } catch (error) {
    const reasons = cancellationReasons(error);
    if (reasons === undefined) throw error;
    return existingRun(ctx, { ...context, idempotencyKey: input.idempotencyKey, requestHash }, reasons, error);
  }
};

interface Attempt {
  readonly tenantId: string;
  readonly runId: string;
  readonly idempotencyKey: string | undefined;
  readonly requestHash: string;
}

/** A create that found its key or run id taken: the stored request hash decides between "same run" and conflict. */
const existingRun = async (ctx: LedgerContext, attempt: Attempt, reasons: readonly CancellationReason[], error: unknown): Promise<CreatedRun> => {
  // The key's reason is third when there is a key; otherwise the third item is the summary.
  const [runReason, , third] = reasons;
  const keyReason = attempt.idempotencyKey === undefined ? undefined : third;
  const context = { tenantId: attempt.tenantId, runId: attempt.runId };
  if (conditionFailed(keyReason)) {
    const record = parseItem(IdempotencyItem, keyReason.item, context);
    if (record.requestHash !== attempt.requestHash) {
      throw new IdempotencyConflict({ ...context, idempotencyKey: attempt.idempotencyKey, existingRunId: record.runId }, { cause: error });
    }
    const stored = await getItem(ctx, runKey(attempt.tenantId, record.runId));
    if (stored === undefined) throw new RunNotFound({ tenantId: attempt.tenantId, runId: record.runId }, { cause: error });
    return { run: parseItem(RunItem, stored, context), created: false };
  }
  if (conditionFailed(runReason)) {
    const stored = parseItem(RunItem, runReason.item, context);
    if (stored.requestHash !== attempt.requestHash) {
      throw new IdempotencyConflict({ ...context, idempotencyKey: undefined, existingRunId: stored.runId }, { cause: error });
    }
    return { run: stored, created: false };
  }
  throw error;
};

const byDispatchOrder = (a: SubtaskItem, b: SubtaskItem): number => a.round - b.round || a.position - b.position;

const isPart = (item: Record<string, unknown>): boolean => String(item.sk).startsWith(SORT_KEYS.partPrefix);

/** A partition's items and every part they refer to (see `completeParts`). */
const readPartition = async (
  ctx: LedgerContext,
  pk: string,
  read?: Record<string, unknown>[],
): Promise<{ items: Record<string, unknown>[]; parts: Record<string, unknown>[] }> => {
  const items = read ?? (await queryPartition(ctx, pk));
  return { items, parts: await completeParts(ctx, pk, items, items.filter(isPart)) };
};

/**
 * Everything stored about a run, or `undefined` when this tenant has no such run. One strongly
 * consistent Query of the run's partition, and of each of its shards when it has more than one
 * (at most `SHARD_READS` at a time); subtasks of a round that is not committed yet are returned
 * apart (`uncommitted`) and never mixed into the manifest.
 */
export const loadRun = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<RunRecord | undefined> => {
  const context = { tenantId, runId };
  const own = await queryPartition(ctx, runPartition(tenantId, runId));
  const runImage = own.find((item) => item.sk === SORT_KEYS.run);
  if (runImage === undefined) return undefined;
  const shards = parseItem(RunItem.pick({ shards: true }), runImage, context).shards ?? 1;
  rememberShards(ctx, tenantId, runId, shards);
  const partitions = [
    await readPartition(ctx, runPartition(tenantId, runId), own),
    ...(shards > 1 ? await mapLimit(shardPartitions(tenantId, runId, shards), SHARD_READS, (pk) => readPartition(ctx, pk)) : []),
  ];
  const items = partitions.flatMap((partition) => partition.items);
  const parts = partitions.flatMap((partition) => partition.parts);
  const run = parseItem(RunItem, unspill(runImage, parts, context), context);
  const meta = metaFromStored(
    items.find((item) => item.sk === SORT_KEYS.meta),
    parts,
    context,
  );
  const { subtasks: all, copies } = splitCopies(
    items
      .filter((item) => String(item.sk).startsWith(SORT_KEYS.subtaskPrefix))
      .map((item) => asRunDecides(run)(parseItem(SubtaskItem, unspill(item, parts, context), context)))
      .sort(byDispatchOrder),
  );
  const late = items
    .filter((item) => String(item.sk).startsWith(SORT_KEYS.latePrefix))
    .map((item) => parseItem(LateItem, unspill(item, parts, context), context));
  return {
    run,
    meta,
    subtasks: all.filter((item) => item.round <= run.round),
    late,
    uncommitted: all.filter((item) => item.round > run.round),
    copies,
  };
};

/** What {@link loadRunPage} asks for. */
export interface RunPageRequest {
  readonly tenantId: string;
  readonly runId: string;
  /** Subtasks of the page, the first in id order (0: no page). */
  readonly limit: number;
  /** A run of at most this many committed subtasks is read whole instead (`loadRun`). */
  readonly wholeUpTo?: number;
}

/** A run read whole (a small one), or without reading all of it. */
export type RunRead = { readonly kind: 'whole'; readonly record: RunRecord } | { readonly kind: 'page'; readonly record: RunPageRecord };

/**
 * A run without reading all of it, or `undefined` when this tenant has no such run: GetItems of
 * the run and meta items (and their parts), the committed subtasks' states only
 * (`committedProgress`), and the first `limit` subtasks in id order (`firstSubtaskPage`; no page
 * read for 0). What it reads grows with the run by one small projected key per subtask, not by
 * whole subtask items, which is what lets a large run's cancel and paged reads answer in time.
 * A run of at most `wholeUpTo` committed subtasks (its run item's `roundSizes`) is read whole.
 *
 * @example
 * const read = await loadRunPage(ctx, { tenantId: 'acme', runId: 'r-1', limit: 100 }); // read?.kind === 'page'
 */
export const loadRunPage = async (ctx: LedgerContext, request: RunPageRequest): Promise<RunRead | undefined> => {
  const { tenantId, runId, limit, wholeUpTo } = request;
  const context = { tenantId, runId };
  const [runImage, metaImage] = await Promise.all([getItem(ctx, runKey(tenantId, runId)), getItem(ctx, metaKey(tenantId, runId))]);
  if (runImage === undefined) return undefined;
  const run = parseItem(RunItem, await withParts(ctx, runImage, context), context);
  if (wholeUpTo !== undefined && run.roundSizes.reduce((sum, size) => sum + size, 0) <= wholeUpTo) {
    const record = await loadRun(ctx, tenantId, runId);
    return record === undefined ? undefined : { kind: 'whole', record };
  }
  rememberShards(ctx, tenantId, runId, run.shards ?? 1);
  const meta = metaFromStored(metaImage === undefined ? undefined : await withParts(ctx, metaImage, context), [], context);
  const [progress, page] = await Promise.all([committedProgress(ctx, run), limit === 0 ? undefined : firstSubtaskPage(ctx, run, limit)]);
  return { kind: 'page', record: { run, meta, progress, ...(page === undefined ? {} : { page }) } };
};

/** What reconcile reads: the manifest of committed rounds and the outcomes of ended subtasks. */
export interface ManifestRead {
  readonly run: RunItem;
  readonly manifest: Manifest;
  readonly subtasks: readonly SubtaskItem[];
  /** One per ended subtask, in dispatch order. Equal in length to `manifest.subtasks` once `unfinished` is empty. */
  readonly outcomes: readonly Outcome[];
  /** Committed subtasks not yet ended. */
  readonly unfinished: readonly string[];
  /** Subtasks written by a round whose commit marker is missing (a dispatch in progress or crashed). */
  readonly uncommitted: readonly string[];
  /**
   * When the round after the committed ones was first written, if an earlier attempt wrote some
   * of it: a retried append must fix the same absolute deadlines.
   */
  readonly uncommittedDispatchedAt: string | undefined;
  /**
   * By hedged subtask id, the outcomes of the pieces that won its `subdivide` race
   * (`hedgeWinner.by === 'pieces'`): reconcile judges such a subtask by them (docs/hedging.md).
   */
  readonly pieces: ReadonlyMap<string, readonly Outcome[]>;
  /** The request's goal, for the answer's synthesis. */
  readonly goal: string;
  /** What the request asked of synthesis; absent: the deterministic merge. */
  readonly synthesis: SynthesisRequest | undefined;
}

/** The winning pieces' outcomes of each subtask a `subdivide` race ended, in the winner's order. */
const winningPieces = (subtasks: readonly SubtaskItem[], copies: readonly SubtaskItem[]): Map<string, Outcome[]> => {
  const copyById = new Map(copies.map((copy) => [copy.subtaskId, copy]));
  const pieces = new Map<string, Outcome[]>();
  for (const item of subtasks) {
    if (item.hedgeWinner?.by !== 'pieces') continue;
    pieces.set(
      item.subtaskId,
      item.hedgeWinner.ids.flatMap((id) => {
        const copy = copyById.get(id);
        const outcome = copy === undefined ? undefined : toOutcome(copy);
        return outcome === undefined ? [] : [outcome];
      }),
    );
  }
  return pieces;
};

const verifyManifest = (record: RunRecord, context: LedgerErrorContext): void => {
  record.run.roundSizes.forEach((expected, index) => {
    const round = index + 1;
    const found = record.subtasks.filter((item) => item.round === round).length;
    if (found !== expected) throw new ManifestIncomplete({ ...context, round, expected, found });
  });
  for (const item of record.subtasks) {
    if (contentHash(item.assignment) !== item.assignmentHash) {
      throw new ImmutableAssignment({ ...context, subtaskId: item.subtaskId, detail: 'the stored assignment no longer matches the hash written at dispatch' });
    }
  }
};

/**
 * The manifest as dispatched, for reconcile. Only rounds whose commit marker is written are
 * included, each must have exactly the number of subtasks its marker counts
 * (`ManifestIncomplete` otherwise), and each assignment must still match its hash
 * (`ImmutableAssignment` otherwise).
 */
export const readManifest = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<ManifestRead> => {
  const context = { tenantId, runId };
  const record = await loadRun(ctx, tenantId, runId);
  if (record === undefined) throw new RunNotFound(context);
  verifyManifest(record, context);
  const { request } = record.meta;
  return {
    run: record.run,
    manifest: {
      universe: record.meta.universe,
      subtasks: dispatchedSubtasks(record.subtasks),
      policy: request.policy,
      ...(request.questions === undefined ? {} : { questions: request.questions }),
    },
    subtasks: record.subtasks,
    outcomes: record.subtasks.map(toOutcome).filter((outcome): outcome is Outcome => outcome !== undefined),
    unfinished: record.subtasks.filter((item) => !isTerminal(item.state)).map((item) => item.subtaskId),
    uncommitted: record.uncommitted.map((item) => item.subtaskId),
    uncommittedDispatchedAt: record.uncommitted.find((item) => item.round === record.run.round + 1)?.dispatchedAt,
    pieces: winningPieces(record.subtasks, record.copies ?? []),
    goal: record.meta.goal,
    synthesis: request.synthesis,
  };
};
