import { GAP_LABELS, type GapCategory, type Picture, type Span } from './geometry';
import { gapText, lanesNote, overlapText, pictureSummary, subtaskText } from './describe';

/**
 * Draws a picture as SVG and HTML elements. Everything is built with DOM calls and text nodes, so
 * text from the run (goals, reasons, ids) is never parsed as markup.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The drawing's coordinate system (the SVG scales to its container). */
export const LAYOUT = {
  width: 960,
  /** Left column: row names. */
  label: 170,
  /** Right column: subtask states. */
  state: 110,
  row: 26,
  bar: 16,
  /** A mark is never drawn narrower than this, so a three-day gap in a year stays visible. */
  minWidth: 3,
} as const;

const AXIS = LAYOUT.width - LAYOUT.label - LAYOUT.state;

type Attributes = Readonly<Record<string, string | number | undefined>>;

const el = <K extends keyof SVGElementTagNameMap>(doc: Document, tag: K, attributes: Attributes = {}, ...children: Array<Node | string>): SVGElementTagNameMap[K] => {
  const node = doc.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
};

const html = <K extends keyof HTMLElementTagNameMap>(doc: Document, tag: K, attributes: Attributes = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] => {
  const node = doc.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
};

/** Pixel x and width of a span on the axis, at least `minWidth` wide. */
export const spanBox = (span: Span): { x: number; width: number } => {
  const x = LAYOUT.label + span.from * AXIS;
  const width = Math.max(LAYOUT.minWidth, (span.to - span.from) * AXIS);
  return { x: Math.min(x, LAYOUT.label + AXIS - width), width };
};

/** Patterns for the four gap categories and for overlaps: stripes, dots, crosses, dense stripes, rungs. */
const patternDefs = (doc: Document): SVGDefsElement => {
  const pattern = (id: string, colour: string, ...shapes: SVGElement[]) =>
    el(doc, 'pattern', { id, width: 6, height: 6, patternUnits: 'userSpaceOnUse' }, el(doc, 'rect', { width: 6, height: 6, fill: '#ffffff' }), ...shapes.map((s) => (s.setAttribute('stroke', colour), s.setAttribute('fill', colour), s)));
  return el(
    doc,
    'defs',
    {},
    pattern('tessera-pattern-rechecked-empty', 'var(--tessera-rechecked-empty)', el(doc, 'path', { d: 'M0,6 L6,0', 'stroke-width': 1.2 })),
    pattern('tessera-pattern-data-found', 'var(--tessera-data-found)', el(doc, 'circle', { cx: 3, cy: 3, r: 1.4 })),
    pattern('tessera-pattern-unchecked', 'var(--tessera-unchecked)', el(doc, 'path', { d: 'M0,0 L6,6 M6,0 L0,6', 'stroke-width': 1.2 })),
    pattern('tessera-pattern-unread', 'var(--tessera-unread)', el(doc, 'rect', { x: 0, y: 0, width: 3, height: 6 })),
    pattern('tessera-pattern-overlap', 'var(--tessera-overlap)', el(doc, 'path', { d: 'M0,3 L6,3', 'stroke-width': 1.5 })),
  );
};

/**
 * The patterns, once per shadow root: the picture and the legend refer to them by id, and ids are
 * scoped to the shadow root, so several components on one page do not collide.
 */
export const renderDefs = (doc: Document): SVGSVGElement =>
  el(doc, 'svg', { width: 0, height: 0, 'aria-hidden': 'true', style: 'position:absolute' }, patternDefs(doc));

/** A focusable group with an accessible name; its text is shown on hover and focus. */
const mark = (doc: Document, text: string, attributes: Attributes, ...children: SVGElement[]): SVGGElement =>
  el(doc, 'g', { class: 'mark', tabindex: 0, role: 'img', 'aria-label': text.replace(/\n/g, ' '), 'data-tip': text, ...attributes }, el(doc, 'title', {}, text), ...children);

const rowLabel = (doc: Document, y: number, text: string, extra: Attributes = {}): SVGTextElement =>
  el(doc, 'text', { x: 0, y: y + LAYOUT.bar - 3, ...extra }, text);

const fraction = (x: number): string => x.toFixed(6);

/**
 * The drawing: axis, universe band, the answer's coverage (read, gaps, overlaps) and one lane per
 * subtask with its assignment (dashed outline), what its data covered (filled) and its state.
 */
export const renderPicture = (doc: Document, p: Picture): SVGSVGElement => {
  const parts: SVGElement[] = [];
  let y = 0;

  // Axis: month or year ticks for time; id or file names for the others.
  const axis = el(doc, 'g', { 'aria-hidden': 'true', class: 'axis' });
  for (const tick of p.ticks) {
    const x = LAYOUT.label + tick.at * AXIS;
    axis.append(el(doc, 'line', { x1: x, x2: x, y1: 14, y2: 20, stroke: '#6b7280' }), el(doc, 'text', { x: x + 2, y: 12, class: 'muted' }, tick.label));
  }
  for (const section of p.sections) {
    const { x, width } = spanBox(section);
    const fits = Math.floor(width / 7);
    const label = section.label.length <= fits ? section.label : `${section.label.slice(0, Math.max(1, fits - 1))}…`;
    axis.append(el(doc, 'text', { x: x + 2, y: 12, class: 'muted' }, el(doc, 'title', {}, section.label), label));
  }
  parts.push(axis);
  y += 22;

  // The universe.
  parts.push(rowLabel(doc, y, 'universe'), el(doc, 'rect', { class: 'band', x: LAYOUT.label, y, width: AXIS, height: LAYOUT.bar, 'data-universe': '' }));
  for (const section of p.sections.slice(1)) {
    const x = LAYOUT.label + section.from * AXIS;
    parts.push(el(doc, 'line', { x1: x, x2: x, y1: y, y2: y + LAYOUT.bar, stroke: '#6b7280' }));
  }
  parts.push(el(doc, 'text', { x: LAYOUT.label + AXIS + 8, y: y + LAYOUT.bar - 3, class: 'muted' }, p.universeText.length > 16 ? p.dimension : p.universeText));
  y += LAYOUT.row;

  // The answer: what was read, each gap by category, each overlap.
  parts.push(rowLabel(doc, y, 'answer'));
  if (p.complete === null) {
    parts.push(el(doc, 'text', { x: LAYOUT.label, y: y + LAYOUT.bar - 3, class: 'muted' }, p.status === 'running' ? 'not yet: the run is still going' : 'no coverage recorded'));
    y += LAYOUT.row;
  } else {
    parts.push(el(doc, 'rect', { class: 'read', x: LAYOUT.label, y, width: AXIS, height: LAYOUT.bar }));
    parts.push(el(doc, 'text', { x: LAYOUT.label + AXIS + 8, y: y + LAYOUT.bar - 3 }, p.complete ? 'complete' : 'incomplete'));
    const labels: SVGElement[] = [];
    p.gaps.forEach((gap, i) => {
      const shapes: SVGElement[] = [];
      for (const span of gap.spans) {
        const { x, width } = spanBox(span);
        shapes.push(el(doc, 'rect', { class: `gap-${gap.category}`, x, y, width, height: LAYOUT.bar }));
        shapes.push(el(doc, 'rect', { class: 'focus-ring', x: x - 1, y: y - 1, width: width + 2, height: LAYOUT.bar + 2 }));
      }
      const first = gap.spans[0];
      if (first) {
        // The label hangs under the gap on a leader line, staggered so neighbours do not collide.
        const { x, width } = spanBox(first);
        const centre = x + width / 2;
        const ly = y + LAYOUT.bar + 14 + (i % 2) * 14;
        const anchor = centre > LAYOUT.label + AXIS * 0.8 ? 'end' : centre < LAYOUT.label + AXIS * 0.2 ? 'start' : 'middle';
        shapes.push(el(doc, 'line', { x1: centre, x2: centre, y1: y + LAYOUT.bar, y2: ly - 10, stroke: '#374151' }));
        shapes.push(el(doc, 'text', { x: centre, y: ly, 'text-anchor': anchor, 'data-gap-label': '' }, gap.label));
      }
      labels.push(
        mark(doc, gapText(gap), {
          'data-gap': String(i),
          'data-category': gap.category,
          'data-from': first ? fraction(first.from) : undefined,
          'data-to': first ? fraction(gap.spans[gap.spans.length - 1]?.to ?? first.to) : undefined,
          'data-subtask': gap.subtaskId,
        }, ...shapes),
      );
    });
    parts.push(...labels);
    y += LAYOUT.row + (p.gaps.length === 0 ? 0 : p.gaps.length === 1 ? 16 : 30);
  }

  if (p.overlaps.length > 0) {
    parts.push(rowLabel(doc, y, 'overlaps'));
    p.overlaps.forEach((overlap, i) => {
      const shapes = overlap.spans.map((span) => el(doc, 'rect', { class: 'overlap', ...spanBox(span), y, height: LAYOUT.bar }));
      parts.push(mark(doc, overlapText(overlap), { 'data-overlap': String(i) }, ...shapes));
    });
    y += LAYOUT.row;
  }

  // One lane per subtask, in dispatch order.
  parts.push(el(doc, 'line', { x1: 0, x2: LAYOUT.width, y1: y - 5, y2: y - 5, stroke: '#d1d5db' }));
  for (const s of p.subtasks) {
    const shapes: SVGElement[] = [rowLabel(doc, y, `${s.id} · ${s.worker}`.slice(0, 24))];
    for (const span of s.assigned) shapes.push(el(doc, 'rect', { class: 'assigned', ...spanBox(span), y, height: LAYOUT.bar, 'data-assigned': '' }));
    for (const span of s.observed) shapes.push(el(doc, 'rect', { class: 'observed', ...spanBox(span), y: y + 4, height: LAYOUT.bar - 8, 'data-observed': '' }));
    const state = `${s.stateLabel}${s.late > 0 ? ' · late' : ''}`;
    shapes.push(el(doc, 'text', { x: LAYOUT.label + AXIS + 8, y: y + LAYOUT.bar - 3, class: `state-${s.state}`, 'data-state-label': '' }, state));
    shapes.push(el(doc, 'rect', { class: 'focus-ring', x: -2, y: y - 3, width: LAYOUT.width + 4, height: LAYOUT.bar + 6 }));
    parts.push(mark(doc, subtaskText(s), { 'data-subtask': s.id, 'data-state': s.state, 'data-late': s.late > 0 ? String(s.late) : undefined }, ...shapes));
    y += LAYOUT.row;
  }
  if (p.subtaskTotal > p.subtasks.length) {
    parts.push(el(doc, 'text', { x: LAYOUT.label, y: y + LAYOUT.bar - 3, class: 'muted', 'data-lanes-note': '' }, lanesNote(p)));
    y += LAYOUT.row;
  }

  return el(doc, 'svg', { viewBox: `0 0 ${LAYOUT.width} ${y}`, role: 'group', 'aria-label': pictureSummary(p), 'data-dimension': p.dimension }, ...parts);
};

const swatch = (doc: Document, className: string): SVGSVGElement =>
  el(doc, 'svg', { viewBox: '0 0 28 14', 'aria-hidden': 'true' }, el(doc, 'rect', { class: className, x: 0.5, y: 0.5, width: 27, height: 13 }));

/** What each fill, pattern and outline means, in words. */
export const renderLegend = (doc: Document): HTMLUListElement => {
  const item = (className: string, text: string) => html(doc, 'li', {}, swatch(doc, className), text);
  const gaps = (Object.keys(GAP_LABELS) as GapCategory[]).map((c) => item(`gap-${c}`, `gap: ${GAP_LABELS[c]}`));
  return html(doc, 'ul', { class: 'legend', 'aria-label': 'Legend' }, item('assigned', 'assigned'), item('observed', 'read (observed)'), ...gaps, item('overlap', 'overlap'));
};

/** Goal, status, progress and the statement. */
export const renderHeader = (doc: Document, p: Picture): HTMLElement =>
  html(
    doc,
    'header',
    {},
    html(doc, 'div', { class: 'header' }, html(doc, 'p', { class: 'goal' }, p.goal), html(doc, 'span', { class: 'status', 'data-status': p.status }, p.status), html(doc, 'span', { class: 'meta' }, p.progressText)),
    html(doc, 'p', { class: 'statement', 'data-statement': '' }, p.statement ?? (p.status === 'running' ? 'The statement is written when the run ends.' : 'No statement was written.')),
  );
