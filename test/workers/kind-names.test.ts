import { describe, expect, it } from 'vitest';
import { KIND_NAMES } from '../../examples/app';
import { FAULT_SUITE_KINDS } from '../../examples/app/kind-names';
import { exampleFanOut } from '../../examples/app/cdk';
import { registry as faultRegistry } from '../../examples/app/fault-workers';
import { registry } from '../../examples/app/workers';

/**
 * The example app's kind names are written once (examples/app/kind-names.ts); the kinds, their
 * follow-up routing and the CDK props import them. Both sides must name the same kinds.
 */
describe('the worker-kind seam of the example app', () => {
  it("names exactly the kinds the fault-injection module defines, and the production module lacks only the fault suite's", () => {
    expect([...faultRegistry.kinds()].sort()).toEqual(Object.values(KIND_NAMES).sort());
    expect(FAULT_SUITE_KINDS).toEqual(['chaos', 'helpdesk', 'helpdesk-mirrored', 'ticket-export', 'tax-statements-faulty']);
    expect([...registry.kinds()].sort()).toEqual(
      Object.values(KIND_NAMES)
        .filter((kind) => !FAULT_SUITE_KINDS.includes(kind))
        .sort(),
    );
  });

  it('routes every alternate source to a kind the module defines', () => {
    const catalog = registry.catalog();
    const alternates = catalog.kinds().flatMap((kind) => catalog.get(kind)?.alternateSource ?? []);
    expect(alternates).toEqual([KIND_NAMES.transactionFeed]);
    for (const alternate of alternates) expect(registry.kinds()).toContain(alternate);
  });

  it('gives per-kind settings only to kinds the module defines', () => {
    const settings = Object.keys(exampleFanOut({ faultInjection: false }).kinds ?? {});
    expect(settings).toEqual([KIND_NAMES.scoutCrm]);
    for (const kind of settings) expect(registry.kinds()).toContain(kind);
  });
});
