import { describe, expect, it } from 'vitest';
import { runPartition, SHARDING, shardCount, shardOf, shardPartition, shardPartitions, subtaskKey, lateKey, SUBTASKS_PER_SHARD } from '../../lib/ledger/keys';

describe('the shard count', () => {
  it('is one shard per 500 planned subtasks, at least one and at most the cap', () => {
    expect(SUBTASKS_PER_SHARD).toBe(500);
    expect([0, 1, 500, 501, 1000, 1001, 10_000].map((n) => shardCount(n))).toEqual([1, 1, 1, 2, 2, 3, 20]);
    expect(shardCount(1_000_000)).toBe(SHARDING.maxShards);
    expect(shardCount(7, 2)).toBe(4);
  });
});

describe('the shard of a subtask', () => {
  // FNV-1a 32-bit reference values: "a" → 0xe40c292c, "foobar" → 0xbf9cf968.
  it('is FNV-1a of the id modulo the shard count', () => {
    expect(shardOf('a', 7)).toBe(0xe40c292c % 7);
    expect(shardOf('a', 7)).toBe(5);
    expect(shardOf('foobar', 10)).toBe(0xbf9cf968 % 10);
    expect(shardOf('foobar', 10)).toBe(0);
  });

  it('puts a hedge copy with the subtask it races, and a follow-up by its own id', () => {
    expect(shardOf('foobar.h1', 10)).toBe(0);
    expect(shardOf('foobar.h12', 10)).toBe(0);
    expect(shardOf('a.h3', 7)).toBe(5);
    // 'foobar.r2' is a subtask of its own: FNV-1a of its own bytes, not of 'foobar'.
    const ownIds = Array.from({ length: 40 }, (_, i) => `foobar.r${i + 2}`);
    expect(new Set(ownIds.map((id) => shardOf(id, 10))).size).toBeGreaterThan(1);
  });

  it('is 0 for a run of one shard, whatever the id', () => {
    expect(['a', 'foobar', 'Z.h1'].map((id) => shardOf(id, 1))).toEqual([0, 0, 0]);
  });
});

describe('keys of a sharded run', () => {
  it('keeps a one-shard run byte for byte in the run partition', () => {
    expect(subtaskKey('acme', 'r-1', 'B')).toEqual({ pk: 'T#acme#R#r-1', sk: 'SUB#B' });
    expect(subtaskKey('acme', 'r-1', 'B', 1)).toEqual({ pk: 'T#acme#R#r-1', sk: 'SUB#B' });
    expect(lateKey('acme', 'r-1', 'B', 2, 1)).toEqual({ pk: 'T#acme#R#r-1', sk: 'LATE#B#000002' });
    expect(shardPartitions('acme', 'r-1', 1)).toEqual(['T#acme#R#r-1']);
  });

  it('names shard k of a run T#<tenant>#R#<runId>#S<k>', () => {
    expect(shardPartitions('acme', 'r-1', 3)).toEqual(['T#acme#R#r-1#S0', 'T#acme#R#r-1#S1', 'T#acme#R#r-1#S2']);
    expect(subtaskKey('acme', 'r-1', 'a', 7)).toEqual({ pk: 'T#acme#R#r-1#S5', sk: 'SUB#a' });
    expect(lateKey('acme', 'r-1', 'a', 1, 7).pk).toBe('T#acme#R#r-1#S5');
  });

  it('cannot be forged by a run id: its # is percent-encoded', () => {
    expect(shardPartition('acme', 'r-1', 2, 4)).not.toBe(runPartition('acme', 'r-1#S2'));
    expect(runPartition('acme', 'r-1#S2')).toBe('T#acme#R#r-1%23S2');
  });
});
