import { defineSynthesizer, faithfulSynthesis } from '../../lib/workers';

/**
 * The example app's model synthesizer (docs/workers.md, "Synthesis"). It is used only by runs
 * that ask for it (`"synthesis"` in the request, as examples/scout-synthesis.json does). Offline,
 * its scripted model writes a faithful synthesis: a claim per question citing its findings, one
 * per conflict citing both sides, a gap claim per missing question. With `MODEL_PROVIDER=bedrock`
 * the same prompt goes to the deployment's Bedrock model, and tessera audits what comes back.
 */
export const scoutSynthesizer = defineSynthesizer({
  system:
    'You brief a sales team on what a competitor changed, from research findings. Write short claims, each citing the ids of the findings it rests on. ' +
    'Cite only ids you were given; cite or set aside (with a reason) every finding; address every question that has findings; ' +
    'for each conflict write one claim citing every side; for a missing question write a claim of kind "gap" naming it, and never answer it. ' +
    'Reply by calling record_synthesis.',
  // At most 8 findings, and about 5,000 tokens of them at four characters a token, in one call; past
  // either, synthesis runs as a tree (examples/scout-tree.json: 14 findings, two partials, then the final).
  inputBudget: { maxChars: 20_000, maxFindings: 8 },
  offlineScript: faithfulSynthesis,
});
