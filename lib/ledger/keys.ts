/**
 * Key layout of the ledger's single table. Every key starts with the tenant, so a run id is only
 * ever looked up inside its own tenant: another tenant's run is not forbidden, it is absent.
 *
 * Caller-supplied parts (tenant, run id, idempotency key) are percent-encoded so that a `#` in a
 * tenant claim cannot forge another key; subtask ids cannot contain `#` (contract regex).
 */

const part = (value: string): string => encodeURIComponent(value);

/** Sort-key values and prefixes inside a run's partition. */
export const SORT_KEYS = {
  /** Run control: status, budget counters, round commit markers, answer. Small and hot. */
  run: 'RUN',
  /** Run description: goal, universe and the whole request. Written once. */
  meta: 'META',
  /** Run summary: what `GET /runs` lists, the run's change version, and the list index's keys. Small. */
  summary: 'SUMMARY',
  subtaskPrefix: 'SUB#',
  latePrefix: 'LATE#',
  /** Parts of a large attribute stored beside its item (`PART#<owner sk>#<attribute>#…`). */
  partPrefix: 'PART#',
  /** The single item of an idempotency-key or tenant-day partition. */
  idempotency: 'IDEM',
  day: 'DAY',
  /** A run's leased block of a tenant-day allowance, beside the day item (`BLOCK#<runId>`). */
  blockPrefix: 'BLOCK#',
  /** A closing's synthesis result (`SYN#r<round>`) and its reserved calls (`SYN#r<round>#CALL#<n>`). */
  synthesisPrefix: 'SYN#',
} as const;

/** A primary key of the ledger table. */
export interface LedgerKey {
  readonly pk: string;
  readonly sk: string;
}

/**
 * The prefix every partition key of one tenant starts with, in the table and in the run list
 * index alike: `T#<tenant>#`. The tenant is percent-encoded, so no tenant's prefix is a prefix of
 * another tenant's (the `#` that ends it cannot occur inside an encoded tenant).
 *
 * @example
 * tenantKeyPrefix('acme') // 'T#acme#'
 * tenantKeyPrefix('a#b') // 'T#a%23b#'
 */
export const tenantKeyPrefix = (tenantId: string): string => `T#${part(tenantId)}#`;

/**
 * Partition key of one run: `T#<tenant>#R#<runId>`.
 *
 * @example
 * runPartition('acme', 'r-1') // 'T#acme#R#r-1'
 */
export const runPartition = (tenantId: string, runId: string): string => `T#${part(tenantId)}#R#${part(runId)}`;

/** @example runKey('acme', 'r-1') // { pk: 'T#acme#R#r-1', sk: 'RUN' } */
export const runKey = (tenantId: string, runId: string): LedgerKey => ({ pk: runPartition(tenantId, runId), sk: SORT_KEYS.run });

/** @example metaKey('acme', 'r-1').sk // 'META' */
export const metaKey = (tenantId: string, runId: string): LedgerKey => ({ pk: runPartition(tenantId, runId), sk: SORT_KEYS.meta });

/** @example summaryKey('acme', 'r-1').sk // 'SUMMARY' */
export const summaryKey = (tenantId: string, runId: string): LedgerKey => ({ pk: runPartition(tenantId, runId), sk: SORT_KEYS.summary });

/**
 * Partition of the run list index that holds a tenant's runs of one status:
 * `T#<tenant>#RUNS#<status>`. A run moves between them when its status changes.
 *
 * @example
 * runListPartition('acme', 'running') // 'T#acme#RUNS#running'
 */
export const runListPartition = (tenantId: string, status: string): string => `T#${part(tenantId)}#RUNS#${status}`;

/**
 * Sort key of a run in the run list index: creation instant, then run id, so the newest sorts
 * last and runs created in the same millisecond keep one total order.
 *
 * @example
 * runListSort('2025-06-01T12:00:00.000Z', 'r-1') // '2025-06-01T12:00:00.000Z#r-1'
 */
export const runListSort = (createdAt: string, runId: string): string => `${createdAt}#${runId}`;

/**
 * Write sharding of a run's subtask-level items (docs/ledger.md, "Write-sharded runs"). A run
 * planned with more than {@link SUBTASKS_PER_SHARD} subtasks keeps its `SUB#`, `LATE#` and their
 * `PART#` items in `shards` partitions `T#<tenant>#R#<runId>#S<k>` (k = 0 … shards − 1) instead of
 * the run's own partition, which then holds only `RUN`, `META`, `SUMMARY` and their parts. A run of
 * one shard (every run up to {@link SUBTASKS_PER_SHARD} subtasks) keeps every item in the run
 * partition, exactly as before sharding existed.
 */
export const SHARDING = {
  /** Planned subtasks per shard: a run gets ⌈planned / this⌉ shards. */
  subtasksPerShard: 500,
  /** At most this many shards per run (20 cover a 10,000-subtask plan at 500 each). */
  maxShards: 32,
  /** The attribute of the `RUN` item that stores the shard count (absent: one shard). */
  attribute: 'shards',
} as const;
/** Planned subtasks per shard, see {@link SHARDING}. */
export const SUBTASKS_PER_SHARD = SHARDING.subtasksPerShard;

/**
 * The shard count of a run planned with `plannedSubtasks` subtasks: ⌈planned / per shard⌉,
 * at least 1 and at most {@link SHARDING}.maxShards. Fixed when the run is created.
 *
 * @example
 * shardCount(500) // 1
 * shardCount(501) // 2
 * shardCount(10_000) // 20
 */
export const shardCount = (plannedSubtasks: number, subtasksPerShard: number = SUBTASKS_PER_SHARD): number =>
  Math.min(SHARDING.maxShards, Math.max(1, Math.ceil(plannedSubtasks / Math.max(1, subtasksPerShard))));

/** A hedge copy's suffix (`<id>.h<n>`): a copy lives in the shard of the subtask it races. */
const HEDGE_SUFFIX = /(\.h\d+)+$/;

/**
 * The shard of a subtask: FNV-1a (32-bit) of its id's bytes, modulo the run's shard count. A
 * hedge copy (`<id>.h<n>`) is hashed by the id it races, so the original and its copies share a
 * partition; a follow-up (`<id>.r<n>`, `<id>.g<n>`) is a subtask of its own and hashed as it is.
 * Pure and stable: every writer finds an item without a lookup, across deployments.
 *
 * @example
 * shardOf('B', 1) // 0
 * shardOf('C.h2', 8) === shardOf('C', 8) // true
 */
export const shardOf = (subtaskId: string, shards: number): number => {
  if (shards <= 1) return 0;
  const base = subtaskId.replace(HEDGE_SUFFIX, '');
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(base)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
};

/**
 * Partition key of shard `k` of a run: the run partition itself when the run has one shard,
 * `T#<tenant>#R#<runId>#S<k>` otherwise (a run id's `#` is percent-encoded, so no run's own
 * partition can look like another run's shard).
 *
 * @example
 * shardPartition('acme', 'r-1', 0, 1) // 'T#acme#R#r-1'
 * shardPartition('acme', 'r-1', 3, 20) // 'T#acme#R#r-1#S3'
 */
export const shardPartition = (tenantId: string, runId: string, shard: number, shards: number): string =>
  shards <= 1 ? runPartition(tenantId, runId) : `${runPartition(tenantId, runId)}#S${shard}`;

/**
 * Every partition that holds a run's subtask-level items, in shard order.
 *
 * @example
 * shardPartitions('acme', 'r-1', 2) // ['T#acme#R#r-1#S0', 'T#acme#R#r-1#S1']
 */
export const shardPartitions = (tenantId: string, runId: string, shards: number): string[] =>
  Array.from({ length: Math.max(1, shards) }, (_, shard) => shardPartition(tenantId, runId, shard, shards));

/** The partition of one subtask's items (`SUB#`, `LATE#`, their parts). */
export const subtaskPartition = (tenantId: string, runId: string, subtaskId: string, shards: number): string =>
  shardPartition(tenantId, runId, shardOf(subtaskId, shards), shards);

/**
 * @example
 * subtaskKey('acme', 'r-1', 'B') // { pk: 'T#acme#R#r-1', sk: 'SUB#B' }
 * subtaskKey('acme', 'r-1', 'B', 4).pk // 'T#acme#R#r-1#S<shardOf("B", 4)>'
 */
export const subtaskKey = (tenantId: string, runId: string, subtaskId: string, shards = 1): LedgerKey => ({
  pk: subtaskPartition(tenantId, runId, subtaskId, shards),
  sk: `${SORT_KEYS.subtaskPrefix}${subtaskId}`,
});

/**
 * Late evidence of one generation of one subtask. The generation is zero-padded so that a
 * subtask's late items sort by generation.
 *
 * @example
 * lateKey('acme', 'r-1', 'B', 2).sk // 'LATE#B#000002'
 */
export const lateKey = (tenantId: string, runId: string, subtaskId: string, generation: number, shards = 1): LedgerKey => ({
  pk: subtaskPartition(tenantId, runId, subtaskId, shards),
  sk: `${SORT_KEYS.latePrefix}${subtaskId}#${String(generation).padStart(6, '0')}`,
});

/**
 * The idempotency record of `POST /runs` with an `Idempotency-Key`: `T#<tenant>#IDEM#<key>`.
 *
 * @example
 * idempotencyKey('acme', 'order 7').pk // 'T#acme#IDEM#order%207'
 */
export const idempotencyKey = (tenantId: string, key: string): LedgerKey => ({
  pk: `T#${part(tenantId)}#IDEM#${part(key)}`,
  sk: SORT_KEYS.idempotency,
});

/**
 * The UTC calendar day of an instant, `YYYY-MM-DD`: the period of a tenant's daily allowance.
 *
 * @example
 * utcDay(Date.UTC(2025, 5, 30, 23, 59)) // '2025-06-30'
 */
export const utcDay = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);

/**
 * A tenant's usage counters for one UTC day: `T#<tenant>#DAY#<yyyy-mm-dd>`.
 *
 * @example
 * tenantDayKey('acme', '2025-06-30').pk // 'T#acme#DAY#2025-06-30'
 */
export const tenantDayKey = (tenantId: string, day: string): LedgerKey => ({ pk: `T#${part(tenantId)}#DAY#${day}`, sk: SORT_KEYS.day });

/**
 * The record of one run's leased block of a tenant's allowance for one UTC day, in the day's
 * partition, so that a holder whose lease expired can be found and its block reclaimed.
 *
 * @example
 * tenantBlockKey('acme', '2025-06-30', 'r-1') // { pk: 'T#acme#DAY#2025-06-30', sk: 'BLOCK#r-1' }
 */
export const tenantBlockKey = (tenantId: string, day: string, runId: string): LedgerKey => ({
  pk: tenantDayKey(tenantId, day).pk,
  sk: `${SORT_KEYS.blockPrefix}${part(runId)}`,
});
