/**
 * The component's look. Every status is told three ways: a fill colour, a pattern (defined in
 * the SVG by `patternDefs`) and a word, so the picture reads in greyscale and to a screen reader.
 * Colours pass WCAG AA contrast for their text; a page can restyle through the CSS custom
 * properties below (`tessera-run { --tessera-read: … }`).
 */
import type { SubtaskState } from '../contract';

/**
 * The colour of each subtask state's word beside its bar (AA contrast on white): a record over the
 * contract's states, so a new state does not compile until it is given its colour.
 */
const STATE_FILLS: Readonly<Record<SubtaskState, string>> = {
  pending: '#1e40af',
  running: '#1e40af',
  ok: '#1e5e22',
  timed_out: '#9b1c1c',
  invalid: '#9b1c1c',
  empty: '#5b4300',
  cancelled: '#5b4300',
};

/** One rule per state: `svg .state-<state> { fill: … }`. */
const stateFills = (): string =>
  Object.entries(STATE_FILLS)
    .map(([state, fill]) => `svg .state-${state} { fill: ${fill}; }`)
    .join('\n');

export const STYLES = `
:host {
  display: block;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--tessera-text, #1a1a1a);
  background: var(--tessera-background, #ffffff);
  --tessera-read: #1f6f8b;
  --tessera-rechecked-empty: #6b7280;
  --tessera-data-found: #2f7d32;
  --tessera-unchecked: #b45309;
  --tessera-unread: #b91c1c;
  --tessera-overlap: #6d28d9;
  --tessera-unanswered: #a21caf;
  --tessera-focus: #1d4ed8;
}
.header { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: baseline; }
.goal { font-weight: 600; font-size: 1.05rem; margin: 0; }
.status { font-weight: 600; padding: 0 .4rem; border: 1px solid currentColor; border-radius: .25rem; }
.status[data-verdict="succeeded"] { color: #1e5e22; }
.status[data-verdict="succeeded-incomplete"] { color: #8a3b00; background: #fff7ed; border-style: dashed; border-width: 2px; }
.status[data-status="failed"] { color: #9b1c1c; }
.status[data-status="cancelled"] { color: #5b4300; }
.status[data-status="running"] { color: #1e40af; }
.meta { color: #4b5563; }
.statement { margin: .5rem 0; }
.error { color: #9b1c1c; }
svg { display: block; width: 100%; height: auto; overflow: visible; }
svg text { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; fill: #1a1a1a; }
svg .muted { fill: #4b5563; }
svg .axis-label { font: 11px ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace; fill: #374151; }
svg .incomplete { fill: #8a3b00; font-weight: 600; }
svg .unanswered { fill: url(#tessera-pattern-unanswered); stroke: var(--tessera-unanswered); }
svg .band { fill: #f3f4f6; stroke: #6b7280; }
svg .read { fill: var(--tessera-read); }
svg .assigned { fill: #ffffff; stroke: #374151; stroke-dasharray: 4 2; }
svg .observed { fill: var(--tessera-read); }
svg .checkpointed { fill: var(--tessera-read); fill-opacity: 0.5; stroke: var(--tessera-read); stroke-dasharray: 3 2; }
svg .mark:focus { outline: none; }
svg .mark:focus .focus-ring, svg .mark:hover .focus-ring { stroke: var(--tessera-focus); stroke-width: 2; }
svg .focus-ring { fill: none; stroke: transparent; }
svg .gap-rechecked-empty { fill: url(#tessera-pattern-rechecked-empty); stroke: var(--tessera-rechecked-empty); }
svg .gap-data-found { fill: url(#tessera-pattern-data-found); stroke: var(--tessera-data-found); }
svg .gap-unchecked { fill: url(#tessera-pattern-unchecked); stroke: var(--tessera-unchecked); }
svg .gap-unread { fill: url(#tessera-pattern-unread); stroke: var(--tessera-unread); }
svg .overlap { fill: url(#tessera-pattern-overlap); stroke: var(--tessera-overlap); }
${stateFills()}
.lists { margin: .5rem 0 0; }
.lists ul { margin: .15rem 0 .5rem; padding: 0; list-style: none; }
.lists li { margin: .15rem 0; }
.lists li svg { width: 28px; height: 14px; display: inline-block; vertical-align: -2px; margin-right: .35rem; }
.list-title { font-weight: 600; margin: .5rem 0 0; }
.lists .word { font-weight: 600; }
.lists .where { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, "Liberation Mono", monospace; font-size: 13px; overflow-wrap: anywhere; }
.legend { display: flex; flex-wrap: wrap; gap: .25rem 1rem; margin: .5rem 0 0; padding: 0; list-style: none; color: #374151; }
.legend li { display: flex; align-items: center; gap: .35rem; }
.legend svg { width: 28px; height: 14px; display: inline-block; }
.tip {
  position: absolute; z-index: 10; max-width: 26rem; padding: .4rem .6rem; pointer-events: none;
  background: #111827; color: #f9fafb; border-radius: .25rem; font-size: 13px; white-space: pre-line;
}
.tip[hidden] { display: none; }
.frame { position: relative; }
`;
