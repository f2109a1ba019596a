/**
 * `@tessera-fanout/client/web`: the `<tessera-run>` coverage viewer, a framework-free custom
 * element with no runtime dependencies, and the pure geometry it draws from. Importing this module
 * in a browser registers `<tessera-run>`; see docs/embedding.md.
 */
import { defineTesseraRun } from './element';

export { defineTesseraRun, RUN_CHANGE_EVENT, RUN_ERROR_EVENT, TESSERA_RUN_TAG, TesseraRunElement } from './element';
export { hasEnded, watchRun, type TokenSource, type Watch, type WatchError, type WatchOptions } from './live';
export {
  GAP_LABELS,
  GAP_STATUSES,
  gapCategory,
  gapLabel,
  mergeSpans,
  pictureOf,
  stateLabel,
  STATE_LABELS,
  UNREAD_LABEL,
  VERDICT_LABELS,
  verdictOf,
  type GapCategory,
  type GapMark,
  type GapStatusLook,
  type OverlapMark,
  type Picture,
  type QuestionMark,
  type Section,
  type Span,
  type SubtaskMark,
  type Tick,
  type Verdict,
} from './geometry';
export {
  AXIS_LABEL_METRICS,
  fitSectionLabels,
  idRuns,
  idsText,
  placeHangingLabels,
  type AxisLabel,
  type HangingLabel,
  type IdRun,
  type LabelledSpan,
  type LabelMetrics,
  type PlacedLabel,
} from './labels';
export { gapText, lanesNote, overlapText, pictureSummary, questionText, subtaskText } from './describe';
/** The contract's types the component reads (type-only: nothing of the contract ships to browsers). */
export type { CoverageGap, GapStatus, RunResource, RunStatus, SubtaskState, SubtaskView, Universe } from '../contract';

defineTesseraRun();
