import { describe, expect, it } from 'vitest';
import { checkObservation, classifyOutcome, observationIssues } from '../../lib/domain';

/** The Scout example's terminal states: time decides first, then what arrived. */
describe('classifyOutcome', () => {
  const observed = { minDate: '2025-04-01', maxDate: '2025-06-27', recordCount: 214 };

  it('seals nothing-by-the-deadline as timed_out and a cancelled run as cancelled', () => {
    expect(classifyOutcome({ dimension: 'time', timedOut: true, outputValid: true, observed, sourcesReached: 3 })).toEqual({
      state: 'timed_out',
      reason: 'no result before the deadline',
    });
    expect(classifyOutcome({ dimension: 'time', cancelled: true, timedOut: true, outputValid: true, observed, sourcesReached: 3 }).state).toBe('cancelled');
  });

  it('calls schema-invalid output invalid, quoting up to three issues', () => {
    expect(classifyOutcome({ dimension: 'time', outputValid: false, outputIssues: ['a', 'b', 'c', 'd'], observed, sourcesReached: 3 })).toEqual({
      state: 'invalid',
      reason: 'output failed its schema: a; b; c',
    });
  });

  it('calls a missing or self-contradicting observation invalid', () => {
    expect(classifyOutcome({ dimension: 'time', outputValid: true, observed: null, sourcesReached: 3 }).state).toBe('invalid');
    expect(
      classifyOutcome({ dimension: 'time', outputValid: true, observed: { minDate: '2025-06-27', maxDate: '2025-04-01', recordCount: 2 }, sourcesReached: 1 }),
    ).toEqual({
      state: 'invalid',
      reason: 'inconsistent observation: minDate 2025-06-27 is after maxDate 2025-04-01',
    });
    expect(observationIssues('time', { minDate: '2025-04-01', maxDate: '2025-04-02', recordCount: 0 })).toEqual([
      'recordCount is 0 but minDate/maxDate are set',
    ]);
    expect(observationIssues('ids', { ids: ['a', 'a'], recordCount: 2 })).toEqual(['observed ids contain duplicates']);
    expect(observationIssues('ids', { ids: ['a', 'a'], recordCount: 2 }, { checkDuplicateIds: false })).toEqual([]);
    expect(checkObservation('paths', { ids: ['a'], recordCount: 1 })).toEqual([
      { code: 'inconsistent_observation', message: 'observed block is not a paths observation (files, recordCount)' },
    ]);
  });

  it('calls zero records empty, and flags an empty with no source reached as unreachable', () => {
    const none = { minDate: null, maxDate: null, recordCount: 0 };
    expect(classifyOutcome({ dimension: 'time', outputValid: true, observed: none, sourcesReached: 0 })).toEqual({
      state: 'empty',
      reason: 'no source was reachable',
      sourceUnreachable: true,
    });
    expect(classifyOutcome({ dimension: 'time', outputValid: true, observed: none, sourcesReached: 2 })).toEqual({
      state: 'empty',
      reason: 'no records in 2 sources reached',
    });
  });

  it('calls valid, consistent, non-empty results ok', () => {
    expect(classifyOutcome({ dimension: 'time', outputValid: true, observed, sourcesReached: 3 })).toEqual({ state: 'ok' });
  });
});
