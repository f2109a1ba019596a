import { z } from 'zod';
import { defineWorker, keyedSource, type DefinedWorker } from '../../lib/workers';
import { KIND_NAMES } from './kind-names';

/**
 * The re-check kinds of the end-to-end suite: a support backlog of 60 tickets (`T-001`…`T-060`)
 * and a helpdesk whose paged API loses the same three tickets between pages every time, the
 * way a listing that shifts while it is read does. Only the example app's `fault-workers.ts`
 * registers them, beside `chaos`.
 *
 * - `helpdesk` has no alternate source: its gaps are re-read by the helpdesk itself, which can
 *   never confirm them empty.
 * - `helpdesk-mirrored` reads the same helpdesk, with the ticket export as its alternate source.
 * - `ticket-export` reads the nightly export, which has every ticket. It takes another input
 *   than the helpdesk (`{ format }`, not `{ pageSize }`), so `helpdesk-mirrored` maps its input
 *   for a re-check (`recheckInput`).
 */

/** The tickets the helpdesk's paged API always drops. */
export const HELPDESK_DROPPED: readonly string[] = ['T-017', 'T-018', 'T-019'];

/** Ticket `T-nnn`, for n = 1…60. */
export const ticketId = (n: number): string => `T-${String(n).padStart(3, '0')}`;

/** The backlog: 60 tickets; ticket n took `n % 5 + 1` hours to resolve. */
export const BACKLOG: ReadonlyMap<string, { readonly hours: number }> = new Map(
  Array.from({ length: 60 }, (_, i) => [ticketId(i + 1), { hours: ((i + 1) % 5) + 1 }]),
);

const TicketFindings = z.object({ tickets: z.int().min(0), hours: z.int().min(0) });
type TicketFindings = z.infer<typeof TicketFindings>;

const sumTickets = (all: readonly TicketFindings[]) => ({
  tickets: all.reduce((sum, f) => sum + f.tickets, 0),
  hours: all.reduce((sum, f) => sum + f.hours, 0),
});
const describeTickets = (result: ReturnType<typeof sumTickets>): string => `${result.tickets} tickets, ${result.hours} hours to resolve.`;

const HelpdeskInput = z.strictObject({ pageSize: z.int().min(1).max(100).default(20) });
const ExportInput = z.strictObject({ format: z.literal('csv') });

const Ticket = z.object({ id: z.string(), hours: z.int() });

/** The helpdesk's API: a ticket it lost between pages comes back as no row, though the helpdesk answered. */
const helpdeskApi = keyedSource({
  description: 'Look up one assigned ticket through the helpdesk API',
  args: z.strictObject({ id: z.string().min(1) }),
  idOf: (args) => args.id,
  load: async ({ id }) => {
    const ticket = HELPDESK_DROPPED.includes(id) ? undefined : BACKLOG.get(id);
    return { source: 'helpdesk', rows: ticket ? [{ id, hours: ticket.hours }] : [] };
  },
});

/** The nightly export: every ticket of the backlog. */
const exportFile = keyedSource({
  description: 'Look up one assigned ticket in the nightly export',
  args: z.strictObject({ id: z.string().min(1) }),
  idOf: (args) => args.id,
  load: async ({ id }) => {
    const ticket = BACKLOG.get(id);
    return { source: 'ticket-export', rows: ticket ? [{ id, hours: ticket.hours }] : [] };
  },
});

const readEach = async (ids: readonly string[], read: (args: { id: string }) => Promise<readonly unknown[]>): Promise<TicketFindings> => {
  const rows = [];
  for (const id of ids) rows.push(...(await read({ id })).map((row) => Ticket.parse(row)));
  return { tickets: rows.length, hours: rows.reduce((sum, row) => sum + row.hours, 0) };
};

const helpdeskKind = (kind: string, alternate: boolean): DefinedWorker =>
  defineWorker({
    kind,
    dimension: 'ids',
    label: 'helpdesk',
    recordNoun: 'tickets',
    ...(alternate ? { alternateSource: KIND_NAMES.ticketExport, recheckInput: () => ({ format: 'csv' }) } : {}),
    input: HelpdeskInput,
    output: TicketFindings,
    sources: { ticket: helpdeskApi },
    merge: sumTickets,
    summarize: describeTickets,
    run: async (ctx) => readEach(ctx.assignment.scope.ids, ctx.tools.ticket),
  });

/** The helpdesk, with no alternate source. */
export const helpdesk = helpdeskKind(KIND_NAMES.helpdesk, false);

/** The same helpdesk, re-checked against the ticket export. */
export const helpdeskMirrored = helpdeskKind(KIND_NAMES.helpdeskMirrored, true);

/** The nightly ticket export, the helpdesk's alternate source. */
export const ticketExport = defineWorker({
  kind: KIND_NAMES.ticketExport,
  dimension: 'ids',
  label: 'ticket export',
  recordNoun: 'tickets',
  input: ExportInput,
  output: TicketFindings,
  sources: { ticket: exportFile },
  merge: sumTickets,
  summarize: describeTickets,
  run: async (ctx) => readEach(ctx.assignment.scope.ids, ctx.tools.ticket),
});
