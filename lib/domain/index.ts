/**
 * The coverage contract core: scope algebra, planner, tiling check, outcome rules, reconcile,
 * follow-ups, policy, coverage and its statement. Pure: it imports only `lib/contract` and zod
 * (a unit test enforces this), so every adapter and handler can call it and tests need no mocks.
 */
export * from './errors';
export * from './catalog';
export * from './outcome';
export * from './intervals';
export * from './time-point';
export * from './scope';
export * from './time';
export * from './calendar-split';
export * from './ids';
export * from './paths';
export * from './dimensions';
export * from './tiling';
export * from './lineage';
export * from './allowance';
export * from './hedge';
export * from './planner';
export * from './reconcile';
export * from './capacity';
export * from './follow-up';
export * from './coverage';
export * from './degraded';
export * from './policy';
export * from './statement';
export * from './words';
export * from './synthesis';
export * from './synthesis-tree';
export * from './checkpoint';
