import { GAP_LABELS, mergeSpans, type GapCategory, type Picture, type Span } from './geometry';
import { gapText, lanesNote, overlapText, pictureSummary, questionText, subtaskText } from './describe';
import { AXIS_LABEL_METRICS, fitSectionLabels, placeHangingLabels } from './labels';

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

/** The axis's width in the drawing's units: the width less the two columns. */
export const AXIS = LAYOUT.width - LAYOUT.label - LAYOUT.state;

/** Rows of labels under the answer's gaps. */
const GAP_LABEL_ROWS = 3;

/** Cells narrower than this (in drawing units) get no divider line: it would only grey the band. */
const DIVIDER_MIN = 4;

type Attributes = Readonly<Record<string, string | number | undefined>>;

const el = <K extends keyof SVGElementTagNameMap>(
  doc: Document,
  tag: K,
  attributes: Attributes = {},
  ...children: Array<Node | string>
): SVGElementTagNameMap[K] => {
  const node = doc.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
};

/** An HTML element with its attributes and children (text is set as text, never parsed). */
export const html = <K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  attributes: Attributes = {},
  ...children: Array<Node | string>
): HTMLElementTagNameMap[K] => {
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
    el(
      doc,
      'pattern',
      { id, width: 6, height: 6, patternUnits: 'userSpaceOnUse' },
      el(doc, 'rect', { width: 6, height: 6, fill: '#ffffff' }),
      ...shapes.map((s) => (s.setAttribute('stroke', colour), s.setAttribute('fill', colour), s)),
    );
  return el(
    doc,
    'defs',
    {},
    pattern('tessera-pattern-rechecked-empty', 'var(--tessera-rechecked-empty)', el(doc, 'path', { d: 'M0,6 L6,0', 'stroke-width': 1.2 })),
    pattern('tessera-pattern-data-found', 'var(--tessera-data-found)', el(doc, 'circle', { cx: 3, cy: 3, r: 1.4 })),
    pattern('tessera-pattern-unchecked', 'var(--tessera-unchecked)', el(doc, 'path', { d: 'M0,0 L6,6 M6,0 L0,6', 'stroke-width': 1.2 })),
    pattern('tessera-pattern-unread', 'var(--tessera-unread)', el(doc, 'rect', { x: 0, y: 0, width: 3, height: 6 })),
    pattern('tessera-pattern-overlap', 'var(--tessera-overlap)', el(doc, 'path', { d: 'M0,3 L6,3', 'stroke-width': 1.5 })),
    pattern('tessera-pattern-unanswered', 'var(--tessera-unanswered)', el(doc, 'path', { d: 'M0,0 L6,6 M-1,5 L1,7 M5,-1 L7,1', 'stroke-width': 2 })),
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
  el(
    doc,
    'g',
    { class: 'mark', tabindex: 0, role: 'img', 'aria-label': text.replace(/\n/g, ' '), 'data-tip': text, ...attributes },
    el(doc, 'title', {}, text),
    ...children,
  );

const rowLabel = (doc: Document, y: number, text: string, extra: Attributes = {}): SVGTextElement =>
  el(doc, 'text', { x: 0, y: y + LAYOUT.bar - 3, ...extra }, text);

const fraction = (x: number): string => x.toFixed(6);

/** Spans as drawn: those less than a drawing unit apart are one mark, so a scattered gap stays a few shapes. */
const drawnSpans = (spans: readonly Span[]): Span[] => mergeSpans(spans, 1 / AXIS);

/**
 * The axis row: month or year ticks for time; for ids and files, the labels that fit
 * (`fitSectionLabels`), each on a tick at the start of its cell, its whole name as its title.
 */
const renderAxis = (doc: Document, p: Picture): SVGGElement => {
  const axis = el(doc, 'g', { 'aria-hidden': 'true', class: 'axis' });
  for (const tick of p.ticks) {
    const x = LAYOUT.label + tick.at * AXIS;
    axis.append(el(doc, 'line', { x1: x, x2: x, y1: 14, y2: 20, stroke: '#6b7280' }), el(doc, 'text', { x: x + 2, y: 12, class: 'muted' }, tick.label));
  }
  const keep = p.dimension === 'paths' ? 'end' : 'start';
  for (const label of fitSectionLabels(p.sections, AXIS, AXIS_LABEL_METRICS, keep)) {
    const x = LAYOUT.label + label.from * AXIS;
    axis.append(
      el(doc, 'line', { x1: x, x2: x, y1: 14, y2: 20, stroke: '#6b7280' }),
      el(
        doc,
        'text',
        { x: x + AXIS_LABEL_METRICS.padPx, y: 12, class: 'axis-label', 'data-axis-label': label.index },
        el(doc, 'title', {}, label.title),
        label.text,
      ),
    );
  }
  return axis;
};

/**
 * The drawing: axis, universe band, the answer's coverage (read, gaps, overlaps), a row per
 * unanswered question, and one lane per subtask with its assignment (dashed outline), what its
 * data covered (filled) and its state.
 */
export const renderPicture = (doc: Document, p: Picture): SVGSVGElement => {
  const parts: SVGElement[] = [renderAxis(doc, p)];
  let y = 22;

  // The universe, with a divider between cells wide enough to show one.
  parts.push(rowLabel(doc, y, 'universe'), el(doc, 'rect', { class: 'band', x: LAYOUT.label, y, width: AXIS, height: LAYOUT.bar, 'data-universe': '' }));
  const first = p.sections[0];
  if (first && (first.to - first.from) * AXIS >= DIVIDER_MIN) {
    for (const section of p.sections.slice(1)) {
      const x = LAYOUT.label + section.from * AXIS;
      parts.push(el(doc, 'line', { x1: x, x2: x, y1: y, y2: y + LAYOUT.bar, stroke: '#6b7280' }));
    }
  }
  parts.push(el(doc, 'text', { x: LAYOUT.label + AXIS + 8, y: y + LAYOUT.bar - 3, class: 'muted' }, p.universeText.length > 16 ? p.dimension : p.universeText));
  y += LAYOUT.row;

  // The answer: what was read, each gap by category, each overlap.
  parts.push(rowLabel(doc, y, 'answer'));
  if (p.complete === null) {
    parts.push(
      el(
        doc,
        'text',
        { x: LAYOUT.label, y: y + LAYOUT.bar - 3, class: 'muted' },
        p.status === 'running' ? 'not yet: the run is still going' : 'no coverage recorded',
      ),
    );
    y += LAYOUT.row;
  } else {
    parts.push(el(doc, 'rect', { class: 'read', x: LAYOUT.label, y, width: AXIS, height: LAYOUT.bar }));
    const words = { x: LAYOUT.label + AXIS + 8, y: y + LAYOUT.bar - 3, class: p.complete ? undefined : 'incomplete', 'data-complete': String(p.complete) };
    parts.push(el(doc, 'text', words, p.complete ? 'complete' : 'incomplete'));
    // Each label hangs under its gap's first mark, in the first of three rows where it touches no
    // other label; a gap whose label fits nowhere is still drawn, and named in the list of gaps.
    const drawn = p.gaps.map((gap) => drawnSpans(gap.spans));
    const places = placeHangingLabels(
      p.gaps.map((gap, i) => {
        const box = spanBox(drawn[i]?.[0] ?? { from: 0, to: 0 });
        return { centrePx: box.x - LAYOUT.label + box.width / 2, text: gap.label };
      }),
      AXIS,
      GAP_LABEL_ROWS,
    );
    p.gaps.forEach((gap, i) => {
      const shapes: SVGElement[] = [];
      const spans = drawn[i] ?? [];
      for (const span of spans) {
        const { x, width } = spanBox(span);
        shapes.push(el(doc, 'rect', { class: `gap-${gap.category}`, x, y, width, height: LAYOUT.bar }));
        shapes.push(el(doc, 'rect', { class: 'focus-ring', x: x - 1, y: y - 1, width: width + 2, height: LAYOUT.bar + 2 }));
      }
      const place = places[i];
      const head = spans[0];
      if (place && head) {
        const { x, width } = spanBox(head);
        const centre = x + width / 2;
        const ly = y + LAYOUT.bar + 14 + place.row * 14;
        shapes.push(el(doc, 'line', { x1: centre, x2: centre, y1: y + LAYOUT.bar, y2: ly - 10, stroke: '#374151' }));
        // Centred in the box reserved for it, which the estimate makes at least as wide as the text.
        const middle = LAYOUT.label + (place.fromPx + place.toPx) / 2;
        shapes.push(el(doc, 'text', { x: middle, y: ly, 'text-anchor': 'middle', 'data-gap-label': '' }, gap.label));
      }
      parts.push(
        mark(
          doc,
          gapText(gap),
          {
            'data-gap': String(i),
            'data-category': gap.category,
            'data-status': gap.status,
            'data-from': head ? fraction(head.from) : undefined,
            'data-to': head ? fraction(spans[spans.length - 1]?.to ?? head.to) : undefined,
            'data-subtask': gap.subtaskId,
          },
          ...shapes,
        ),
      );
    });
    const rows = places.reduce((most, place) => (place ? Math.max(most, place.row + 1) : most), 0);
    y += LAYOUT.row + (rows === 0 ? 0 : 2 + rows * 14);
  }

  // One row per unanswered question, over where the subtasks asked it were assigned.
  for (const q of p.missingQuestions) {
    const shapes: SVGElement[] = [rowLabel(doc, y, `${q.id} · question`.slice(0, 24))];
    for (const span of drawnSpans(q.spans)) {
      shapes.push(el(doc, 'rect', { class: 'unanswered', ...spanBox(span), y, height: LAYOUT.bar, 'data-unanswered': '' }));
    }
    if (q.spans.length === 0) shapes.push(el(doc, 'text', { x: LAYOUT.label, y: y + LAYOUT.bar - 3, class: 'muted' }, 'asked of no subtask shown'));
    shapes.push(el(doc, 'text', { x: LAYOUT.label + AXIS + 8, y: y + LAYOUT.bar - 3, class: 'incomplete' }, 'unanswered'));
    shapes.push(el(doc, 'rect', { class: 'focus-ring', x: -2, y: y - 3, width: LAYOUT.width + 4, height: LAYOUT.bar + 6 }));
    parts.push(mark(doc, questionText(q), { 'data-question': q.id }, ...shapes));
    y += LAYOUT.row;
  }

  if (p.overlaps.length > 0) {
    parts.push(rowLabel(doc, y, 'overlaps'));
    p.overlaps.forEach((overlap, i) => {
      const shapes = drawnSpans(overlap.spans).map((span) => el(doc, 'rect', { class: 'overlap', ...spanBox(span), y, height: LAYOUT.bar }));
      parts.push(mark(doc, overlapText(overlap), { 'data-overlap': String(i) }, ...shapes));
    });
    y += LAYOUT.row;
  }

  // One lane per subtask, in dispatch order.
  parts.push(el(doc, 'line', { x1: 0, x2: LAYOUT.width, y1: y - 5, y2: y - 5, stroke: '#d1d5db' }));
  for (const s of p.subtasks) {
    const shapes: SVGElement[] = [rowLabel(doc, y, `${s.id} · ${s.worker}`.slice(0, 24))];
    for (const span of drawnSpans(s.assigned)) {
      shapes.push(el(doc, 'rect', { class: 'assigned', ...spanBox(span), y, height: LAYOUT.bar, 'data-assigned': '' }));
    }
    // Live coverage: what a running worker has checkpointed, under what it will report.
    for (const span of drawnSpans(s.checkpointed)) {
      shapes.push(el(doc, 'rect', { class: 'checkpointed', ...spanBox(span), y: y + 4, height: LAYOUT.bar - 8, 'data-checkpointed': '' }));
    }
    for (const span of drawnSpans(s.observed)) {
      shapes.push(el(doc, 'rect', { class: 'observed', ...spanBox(span), y: y + 4, height: LAYOUT.bar - 8, 'data-observed': '' }));
    }
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
  return html(
    doc,
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    item('assigned', 'assigned'),
    item('observed', 'read (observed)'),
    item('checkpointed', 'read so far (checkpointed, still running)'),
    ...gaps,
    item('unanswered', 'unanswered question'),
    item('overlap', 'overlap'),
  );
};

/**
 * Beside the drawing, in words: every unanswered question with the subtasks asked it, and every
 * gap with its status and where it is (ids in full, consecutive ones as ranges), so a gap too
 * narrow to label on a wide axis is still named. Nothing when there is neither.
 */
export const renderLists = (doc: Document, p: Picture): HTMLElement | undefined => {
  if (p.missingQuestions.length === 0 && p.gaps.length === 0) return undefined;
  const parts: HTMLElement[] = [];
  if (p.missingQuestions.length > 0) {
    const items = p.missingQuestions.map((q) =>
      html(
        doc,
        'li',
        { 'data-question-item': q.id },
        swatch(doc, 'unanswered'),
        html(doc, 'span', { class: 'word' }, 'unanswered'),
        ` · question ${q.id}: ${q.askedOf.length === 0 ? 'asked of no subtask shown' : `asked of ${q.askedOf.join(', ')}`}`,
      ),
    );
    parts.push(
      html(doc, 'p', { class: 'list-title', id: 'questions-title' }, 'Unanswered questions'),
      html(doc, 'ul', { 'aria-labelledby': 'questions-title' }, ...items),
    );
  }
  if (p.gaps.length > 0) {
    const items = p.gaps.map((gap, i) =>
      html(
        doc,
        'li',
        { 'data-gap-item': String(i), 'data-status': gap.status },
        swatch(doc, `gap-${gap.category}`),
        html(doc, 'span', { class: 'word' }, gap.label),
        gap.size ? ` · ${gap.size}: ` : ' · ',
        html(doc, 'span', { class: 'where', 'data-where': '' }, gap.whereInFull),
        html(doc, 'span', { class: 'meta' }, ` (${gap.detail})`),
      ),
    );
    const title = p.dimension === 'ids' ? 'Gaps, by id' : 'Gaps';
    parts.push(html(doc, 'p', { class: 'list-title', id: 'gaps-title' }, title), html(doc, 'ul', { 'aria-labelledby': 'gaps-title' }, ...items));
  }
  return html(doc, 'div', { class: 'lists' }, ...parts);
};

/** Goal, status badge, progress and the statement. */
export const renderHeader = (doc: Document, p: Picture): HTMLElement =>
  html(
    doc,
    'header',
    {},
    html(
      doc,
      'div',
      { class: 'header' },
      html(doc, 'p', { class: 'goal' }, p.goal),
      html(doc, 'span', { class: 'status', 'data-status': p.status, 'data-verdict': p.verdict }, p.verdictLabel),
      html(doc, 'span', { class: 'meta' }, p.progressText),
    ),
    html(
      doc,
      'p',
      { class: 'statement', 'data-statement': '' },
      p.statement ?? (p.status === 'running' ? 'The statement is written when the run ends.' : 'No statement was written.'),
    ),
  );
