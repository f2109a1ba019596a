import { beforeAll, describe, expect, test } from 'vitest';
import { BATCH_HISTORY, BATCH_SUBTASKS, RUN_HISTORY, batchBound, firstRoundBound } from '../../lib/domain/history';
import type { AslStateMachine } from '../../lib/infra/asl';
import {
  batchHistoryOf,
  batchSubtaskIteration,
  hedgedIterationUnrolled,
  runHistoryOf,
  subtaskIteration,
  unhedgedIteration,
  walkPath,
  worstPathEvents,
} from '../../bench/deadline-figures';
import { batchStateMachineDefinition } from '../../lib/infra/synthesized';
import { STATE_NAMES } from '../../lib/infra/run-state-machine';
import { synthTesseraStack } from './synth';

let asl: AslStateMachine;
let batchAsl: AslStateMachine;

beforeAll(() => {
  const synth = synthTesseraStack();
  asl = synth.asl;
  batchAsl = batchStateMachineDefinition(synth.template.toJSON());
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
      perRound: 5 + 2 + 4 + 5 + 2, // Dispatch, IsBatched?, AwaitSubtasks, Reconcile, NextRound?
      finishedSubtask: 5 + 2 + 6 + 2 + 2, // Arm, IsSubtaskOpen, Await, SubtaskDone, iteration
      timedOutSubtask: 5 + 2 + 6 + 5 + 2 + 2, // … Await times out, Seal, SubtaskSealed, iteration
      worstSubtask: 5 + 2 + 6 + 2 + 5 + 2 + 2, // … Await fails, WaitForDeadline, Seal, SubtaskSealed, iteration
      // Arm, IsSubtaskOpen, AwaitHedge (hedge due), Hedge; then Arm, IsSubtaskOpen, Await fails,
      // WaitForDeadline, Seal, SubtaskSealed; iteration.
      worstHedgedSubtask: 5 + 2 + 6 + 5 + (5 + 2 + 6 + 2 + 5 + 2) + 2,
    });
  });

  test('the costliest subtask path is the one through WaitForDeadline', () => {
    const iteration = unhedgedIteration(subtaskIteration(asl));
    const withoutWait = {
      ...iteration,
      States: { ...iteration.States, Await: { ...iteration.States.Await!, Catch: iteration.States.Await!.Catch?.filter((c) => c.Next !== 'WaitForDeadline') } },
    };
    expect(worstPathEvents(iteration) - worstPathEvents(withoutWait)).toBe(2);
  });

  test('a hedged subtask’s costliest path passes Hedge once, then waits out its deadline without the hedge branches', () => {
    const unrolled = hedgedIterationUnrolled(subtaskIteration(asl));
    const after = (name: string) => `${name} (after hedge)`;
    // The path the figure counts, walked state by state: AwaitHedge times out into Hedge, the second Await fails.
    const timingOutTo = (name: string, target: string) => ({ ...unrolled.States[name]!, Next: target });
    const worst = walkPath(
      {
        ...unrolled,
        States: {
          ...unrolled.States,
          [STATE_NAMES.awaitHedge]: timingOutTo(STATE_NAMES.awaitHedge, STATE_NAMES.hedge),
          [after(STATE_NAMES.await)]: timingOutTo(after(STATE_NAMES.await), after(STATE_NAMES.waitForDeadline)),
        },
      },
      (choice, prior) => (choice === STATE_NAMES.isSubtaskOpen && prior === 0 ? STATE_NAMES.awaitHedge : after(STATE_NAMES.await)),
    );
    expect(worst.path).toEqual([
      STATE_NAMES.arm,
      STATE_NAMES.isSubtaskOpen,
      STATE_NAMES.awaitHedge,
      STATE_NAMES.hedge,
      after(STATE_NAMES.arm),
      after(STATE_NAMES.isSubtaskOpen),
      after(STATE_NAMES.await),
      after(STATE_NAMES.waitForDeadline),
      after(STATE_NAMES.seal),
      after(STATE_NAMES.subtaskSealed),
    ]);
    expect(worst.historyEvents).toBe(worstPathEvents(unrolled));
    expect(worst.historyEvents + 2).toBe(RUN_HISTORY.worstHedgedSubtask);
    // The second pass never offers the hedge again.
    expect(JSON.stringify(unrolled.States[after(STATE_NAMES.isSubtaskOpen)])).not.toContain(STATE_NAMES.awaitHedge);
  });

  test('a first round of 1,039 subtasks fits with maxRounds 2, since every round’s overhead is reserved', () => {
    expect(firstRoundBound(2, runHistoryOf(asl))).toBe(1039); // ⌊(25,000 − 8 − 36) / 24⌋
  });
});

describe('the batched path’s arithmetic equals the synthesized state machines', () => {
  test('BATCH_HISTORY (lib/domain, CDK-free) is what walking the run’s and the batch’s ASL counts', () => {
    expect(batchHistoryOf(asl, batchAsl)).toEqual(BATCH_HISTORY);
  });

  test('each figure, counted by hand from the states it passes', () => {
    expect(batchHistoryOf(asl, batchAsl)).toEqual({
      perBatch: 6 + 2, // StartBatch (a .sync Task records TaskSubmitted too), its Map iteration
      perChild: 2 + 5 + 4 + 2, // the child's start and end, LoadBatch, AwaitBatchSubtasks (Map state), BatchDone
    });
  });

  test('a batched round costs the run the same overhead as an inline one: only the Map differs', () => {
    expect(runHistoryOf(asl, 'batched')).toEqual(RUN_HISTORY);
  });

  test('the batch’s per-subtask iteration is the run’s own, state for state', () => {
    expect(batchSubtaskIteration(batchAsl)).toEqual(subtaskIteration(asl));
  });

  test('a batch of the default size fits a child’s history with every subtask hedged on its costliest path', () => {
    expect(batchBound(runHistoryOf(asl), batchHistoryOf(asl, batchAsl))).toBe(594); // ⌊(25,000 − 13) / 42⌋
    expect(BATCH_SUBTASKS * RUN_HISTORY.worstHedgedSubtask + BATCH_HISTORY.perChild).toBe(21_013);
    expect(BATCH_SUBTASKS).toBeLessThanOrEqual(594);
  });
});
