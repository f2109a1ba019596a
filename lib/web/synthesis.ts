import type { AnswerSynthesis, SynthesisFinding } from '../contract';
import { html } from './render';

/**
 * The answer's synthesis in words: each claim with the findings it cites, each citation opening
 * on demand to the finding's statement, subtask and evidence ids; then the audit, clean or its
 * problems, and why the merge answers when synthesis fell back. Nothing without a synthesis.
 */
export const renderSynthesis = (doc: Document, synthesis: AnswerSynthesis | undefined): HTMLElement | undefined => {
  if (synthesis === undefined) return undefined;
  const byId = new Map<string, SynthesisFinding>(synthesis.findings.map((f) => [f.id, f]));
  const citation = (id: string) => {
    const finding = byId.get(id);
    if (finding === undefined) return html(doc, 'span', { class: 'cite unknown', 'data-cite': id }, id);
    const evidence = finding.evidence.length > 0 ? `evidence ${finding.evidence.join(', ')}` : 'no evidence ids';
    return html(
      doc,
      'details',
      { class: 'cite', 'data-cite': id },
      html(doc, 'summary', {}, id),
      html(doc, 'span', { class: 'meta' }, `${finding.statement ?? ''} (subtask ${finding.subtaskId}; ${evidence})`),
    );
  };
  const claims = synthesis.claims.map((claim, i) =>
    html(
      doc,
      'li',
      { 'data-claim': String(i), 'data-kind': claim.kind },
      claim.text,
      ' ',
      ...(claim.kind === 'gap' ? [html(doc, 'span', { class: 'meta' }, `(missing: ${(claim.questionIds ?? []).join(', ')})`)] : claim.cites.map(citation)),
    ),
  );
  const { audit } = synthesis;
  const counts = `${audit.findings} findings, ${audit.cited} cited, ${audit.setAside} set aside`;
  const verdict = audit.clean ? `Audit: clean (${counts})` : `Audit: ${audit.problems.length} problem(s) (${counts})`;
  const problems = audit.problems.map((problem) => html(doc, 'li', { 'data-problem': problem.code }, problem.message));
  const fallback = synthesis.fallback
    ? [html(doc, 'p', { class: 'meta', 'data-fallback': synthesis.fallback.reason }, `The merge answers: ${synthesis.fallback.message}.`)]
    : [];
  return html(
    doc,
    'div',
    { class: 'lists synthesis', 'data-synthesis': synthesis.by },
    html(doc, 'p', { class: 'list-title', id: 'claims-title' }, 'Claims'),
    html(doc, 'ol', { 'aria-labelledby': 'claims-title' }, ...claims),
    html(doc, 'p', { class: 'list-title', 'data-audit': audit.clean ? 'clean' : 'problems' }, verdict),
    ...(problems.length > 0 ? [html(doc, 'ul', {}, ...problems)] : []),
    ...fallback,
  );
};
