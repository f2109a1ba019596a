/**
 * Names of the run-level metrics. The reconcile function emits them (CloudWatch EMF through
 * Powertools Metrics) and the CDK construct's alarms read them, so both import these constants.
 */
export const METRICS = {
  namespace: 'Tessera',
  /** Count, dimension `status`: runs that ended, by final status. */
  runsFinished: 'RunsFinished',
  /** Count: runs that ended with `coverage.complete: false`. */
  runsDegraded: 'RunsDegraded',
  /** Count, dimension `reason` (`timed_out`, `gap_unresolved`, …): why runs were degraded. */
  degradedByReason: 'RunsDegradedByReason',
  /** Count, dimension `state`: subtasks by terminal state. */
  subtasksByState: 'SubtasksByState',
  /** Count: observed gaps re-checked against another source. */
  gapsRechecked: 'GapsRechecked',
  /**
   * Count, dimension `executionStatus` (FAILED, TIMED_OUT, ABORTED): runs still open when their
   * execution ended, closed from the execution's status change. Finalize never ran for them.
   */
  runsClosedOnExecutionEnd: 'RunsClosedOnExecutionEnd',
  /** Count: results that arrived after their subtask was sealed or cancelled. */
  lateResults: 'LateResults',
} as const;

/** The metric dimension names used above. */
export const METRIC_DIMENSIONS = { status: 'status', reason: 'reason', state: 'state', executionStatus: 'executionStatus' } as const;
