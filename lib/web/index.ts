/**
 * `@tessera-fanout/tessera/web`: the `<tessera-run>` coverage viewer, a framework-free custom
 * element with no runtime dependencies, and the pure geometry it draws from. Importing this module
 * in a browser registers `<tessera-run>`; see docs/embedding.md.
 */
import { defineTesseraRun } from './element';

export { defineTesseraRun, RUN_CHANGE_EVENT, RUN_ERROR_EVENT, TESSERA_RUN_TAG, TesseraRunElement } from './element';
export { hasEnded, watchRun, type TokenSource, type Watch, type WatchError, type WatchOptions } from './live';
export {
  GAP_LABELS,
  gapCategory,
  mergeSpans,
  pictureOf,
  stateLabel,
  STATE_LABELS,
  type GapCategory,
  type GapMark,
  type OverlapMark,
  type Picture,
  type Section,
  type Span,
  type SubtaskMark,
  type Tick,
} from './geometry';
export { gapText, lanesNote, overlapText, pictureSummary, subtaskText } from './describe';
/** The contract's types the component reads (type-only: nothing of the contract ships to browsers). */
export type { CoverageGap, RunResource, SubtaskView, Universe } from '../contract';

defineTesseraRun();
