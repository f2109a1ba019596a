/**
 * The example app plus the fault-injection kind `chaos` and the re-check kinds of the helpdesk
 * (`helpdesk`, `helpdesk-mirrored`, `ticket-export`) and the checkpoint suite's `tax-statements-faulty`: the worker module of a stack that runs the
 * end-to-end fault suite (`-c tessera:faultInjection=true`) and of the local cloud that suite
 * starts. A production stack deploys `workers.ts`, which has none of them and no queue for them.
 */
import { createRegistry } from '../../lib/workers';
import { scoutSynthesizer } from './synthesis';
import { chaosKind } from './chaos';
import { helpdesk, helpdeskMirrored, ticketExport } from './helpdesk';
import { createReferenceKinds } from './kinds';
import { taxStatementsFaulty } from './tax-faults';

export const registry = createRegistry([...createReferenceKinds(), chaosKind, helpdesk, helpdeskMirrored, ticketExport, taxStatementsFaulty], {
  synthesizer: scoutSynthesizer,
});
