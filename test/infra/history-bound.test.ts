import { beforeAll, describe, expect, test } from 'vitest';
import { RUN_HISTORY, firstRoundBound } from '../../lib/domain/history';
import type { AslStateMachine } from '../../lib/infra/asl';
import { runHistoryOf, subtaskIteration, worstPathEvents } from '../../lib/infra/deadline-figures';
import { synthTesseraStack } from './synth';

let asl: AslStateMachine;

beforeAll(() => {
  asl = synthTesseraStack().asl;
});

describe('the history arithmetic the planner reads equals the synthesized state machine', () => {
  test('RUN_HISTORY (lib/domain, CDK-free) is what walking the synthesized ASL counts', () => {
    expect(runHistoryOf(asl)).toEqual(RUN_HISTORY);
  });

  test('each figure, counted by hand from the states it passes', () => {
    // Task 5 events, callback Task 6, Choice/Wait/Succeed 2, Fail 1, Map state 4, Map iteration 2, execution 2.
    expect(runHistoryOf(asl)).toEqual({
      limit: 25_000,
      perRun: 2 + (5 + 1), // execution start and end; Finalize then RunFailed
      perRound: 5 + 4 + 5 + 2, // Dispatch, AwaitSubtasks, Reconcile, NextRound?
      finishedSubtask: 5 + 2 + 6 + 2 + 2, // Arm, IsSubtaskOpen, Await, SubtaskDone, iteration
      timedOutSubtask: 5 + 2 + 6 + 5 + 2 + 2, // … Await times out, Seal, SubtaskSealed, iteration
      worstSubtask: 5 + 2 + 6 + 2 + 5 + 2 + 2, // … Await fails, WaitForDeadline, Seal, SubtaskSealed, iteration
    });
  });

  test('the costliest subtask path is the one through WaitForDeadline', () => {
    const iteration = subtaskIteration(asl);
    const withoutWait = { ...iteration, States: { ...iteration.States, Await: { ...iteration.States.Await!, Catch: iteration.States.Await!.Catch?.filter((c) => c.Next !== 'WaitForDeadline') } } };
    expect(worstPathEvents(iteration) - worstPathEvents(withoutWait)).toBe(2);
  });

  test('a first round of 1,040 subtasks fits with maxRounds 2, since every round’s overhead is reserved', () => {
    expect(firstRoundBound(2, runHistoryOf(asl))).toBe(1040);
  });
});
