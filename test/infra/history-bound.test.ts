import { beforeAll, describe, expect, test } from 'vitest';
import type { AslStateMachine } from '../../lib/infra/asl';
import { hedgedIterationUnrolled, historyOf, subtaskIteration, unhedgedIteration, walkPath, worstPathEvents } from '../../bench/deadline-figures';
import { batchStateMachineDefinition } from '../../lib/infra/synthesized';
import { BATCH_EXECUTION_HISTORY, BATCH_SUBTASKS, MAX_BATCH_SUBTASKS, STATE_NAMES } from '../../lib/infra/run-state-machine';
import { MAX_ROUNDS } from '../../lib/infra/defaults';
import { synthTesseraStack } from './synth';

let asl: AslStateMachine;
let batchAsl: AslStateMachine;

beforeAll(() => {
  const synth = synthTesseraStack();
  asl = synth.asl;
  batchAsl = batchStateMachineDefinition(synth.template.toJSON());
});

describe('the history of the one round path, counted on the synthesized state machines', () => {
  test('each figure, counted by hand from the states it passes', () => {
    // Task 5 events, callback or .sync Task 6, Choice/Wait/Succeed 2, Fail 1, Map state 4, Map iteration 2, execution 2.
    expect(historyOf(asl, batchAsl)).toEqual({
      perRun: 2 + (5 + 1), // execution start and end; Finalize then RunFailed
      perRound: 5 + 4 + 5 + 2, // Dispatch, AwaitBatches (Map state), Reconcile, NextRound?
      perBatch: 6 + 2, // StartBatch (a .sync Task records TaskSubmitted too), its Map iteration
      perChild: 2 + 5 + 4, // the child's start and end, LoadBatch, AwaitBatchSubtasks (Map state, which answers the batch number)
      finishedSubtask: 5 + 2 + 6 + 2, // Arm, IsSubtaskOpen, Await (ends the iteration), iteration
      timedOutSubtask: 5 + 2 + 6 + 5 + 2, // … Await times out, Seal (ends the iteration), iteration
      worstSubtask: 5 + 2 + 6 + 2 + 5 + 2, // … Await fails, WaitForDeadline, Seal, iteration
      // Arm, IsSubtaskOpen, AwaitHedge (hedge due), Hedge; then Arm, IsSubtaskOpen, Await fails, WaitForDeadline, Seal; iteration.
      worstHedgedSubtask: 5 + 2 + 6 + 5 + (5 + 2 + 6 + 2 + 5) + 2,
    });
  });

  test('the construct’s batch bound is what the synthesized child counts', () => {
    const counted = historyOf(asl, batchAsl);
    expect(BATCH_EXECUTION_HISTORY).toEqual({ limit: 25_000, perChild: counted.perChild, worstHedgedSubtask: counted.worstHedgedSubtask });
    expect(MAX_BATCH_SUBTASKS).toBe(624); // ⌊(25,000 − 11) / 40⌋
    expect(BATCH_SUBTASKS * counted.worstHedgedSubtask + counted.perChild).toBe(20_011);
  });

  test('the one bound there is, checked at synth: a batch larger than a child’s history holds is refused', () => {
    expect(() => synthTesseraStack({ fanOut: { batchSubtasks: 625 } })).toThrow(
      "batchSubtasks: must fit one child execution's history with every subtask hedged (at most 624)",
    );
  });

  test('the run’s own history is bounded by batches: the largest round of 10,000 over the most rounds stays far below the limit', () => {
    const { perRun, perRound, perBatch } = historyOf(asl, batchAsl);
    const batches = Math.ceil(10_000 / BATCH_SUBTASKS); // 20
    expect(MAX_ROUNDS).toBe(5);
    expect(perRun + MAX_ROUNDS * (perRound + batches * perBatch)).toBe(888); // 8 + 5 × (16 + 160)
    // The construct limit docs/deadlines.md states: the batches a run's execution holds over 5 rounds.
    expect(Math.floor((25_000 - perRun - MAX_ROUNDS * perRound) / perBatch)).toBe(3_114);
  });

  test('the costliest subtask path is the one through WaitForDeadline', () => {
    const iteration = unhedgedIteration(subtaskIteration(batchAsl));
    const withoutWait = {
      ...iteration,
      States: { ...iteration.States, Await: { ...iteration.States.Await!, Catch: iteration.States.Await!.Catch?.filter((c) => c.Next !== 'WaitForDeadline') } },
    };
    expect(worstPathEvents(iteration) - worstPathEvents(withoutWait)).toBe(2);
  });

  test('a hedged subtask’s costliest path passes Hedge once, then waits out its deadline without the hedge branches', () => {
    const unrolled = hedgedIterationUnrolled(subtaskIteration(batchAsl));
    const after = (name: string) => `${name} (after hedge)`;
    // The path the figure counts, walked state by state: AwaitHedge times out into Hedge, the second Await fails.
    // A wait that ends the iteration on success hands over to its catcher's target when it times out or fails.
    const timingOutTo = (name: string, target: string) => {
      const { End: _ends, ...state } = unrolled.States[name]!;
      return { ...state, Next: target };
    };
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
    ]);
    expect(worst.historyEvents).toBe(worstPathEvents(unrolled));
    expect(worst.historyEvents + 2).toBe(BATCH_EXECUTION_HISTORY.worstHedgedSubtask);
    // The second pass never offers the hedge again.
    expect(JSON.stringify(unrolled.States[after(STATE_NAMES.isSubtaskOpen)])).not.toContain(STATE_NAMES.awaitHedge);
  });

  test('the run’s machine has no per-subtask state: its only Map iterates over batches', () => {
    const maps = Object.entries(asl.States).filter(([, state]) => state.Type === 'Map');
    expect(maps.map(([name]) => name)).toEqual([STATE_NAMES.awaitBatches]);
    expect(Object.keys(maps[0]![1].ItemProcessor!.States)).toEqual([STATE_NAMES.startBatch]);
  });
});
