import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY as root, specifiersOf } from '../support/imports';

/*
 * Each round is planned once (docs/architecture.md, "Where each round is planned"): the api plans
 * round 1 and stores it with the run; Reconcile plans every later round and appends it to the
 * manifest; Dispatch only sends what is stored. So Dispatch's module graph holds no planner: were
 * it able to plan, a second plan could differ from the one that decided.
 */

/** The planner's modules: round 1 (`planRun`, `validateRunRequest`) and follow-ups (`planNextRound`). */
const PLANNERS = ['lib/domain/planner.ts', 'lib/domain/follow-up.ts'];

/** `import type` and `export type` are erased: they put nothing in the running module graph. */
const TYPE_ONLY = /(?:^|\n)\s*(?:import|export)\s+type\s[^;]*?from\s*['"][^'"]+['"]/g;

/** The module a relative specifier of `from` names: `x.ts`, or `x/index.ts` for a folder. */
const resolveModule = (from: string, specifier: string): string | undefined => {
  const base = resolve(root, dirname(from), specifier);
  const found = [`${base}.ts`, join(base, 'index.ts'), base].find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
  return found === undefined ? undefined : relative(root, found);
};

/** Every repository module `entry` loads at run time, each with the module that first imported it. */
const runtimeGraph = (entry: string): Map<string, string | undefined> => {
  const importer = new Map<string, string | undefined>([[entry, undefined]]);
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    const source = readFileSync(join(root, file), 'utf8').replace(TYPE_ONLY, '');
    for (const specifier of specifiersOf(source).filter((s) => s.startsWith('.'))) {
      const target = resolveModule(file, specifier);
      if (target === undefined || importer.has(target)) continue;
      importer.set(target, file);
      pending.push(target);
    }
  }
  return importer;
};

/** How `entry` reaches `module`: the chain of importers, `module` first. */
const chainTo = (graph: Map<string, string | undefined>, module: string): string => {
  const chain = [module];
  for (let by = graph.get(module); by !== undefined; by = graph.get(by)) chain.push(by);
  return chain.join(' <- ');
};

describe('each round is planned once', () => {
  it('follows value imports through barrels, and skips type-only imports', () => {
    const graph = runtimeGraph('lib/application/close-run.ts');
    // Reconcile plans the follow-up rounds, through the domain's barrel.
    expect(chainTo(graph, 'lib/domain/follow-up.ts')).toMatch(/^lib\/domain\/follow-up\.ts <- .*lib\/domain\/index\.ts <- .*lib\/application\/close-run\.ts$/);
    const api = runtimeGraph('functions/api.ts');
    expect(api.has('lib/domain/planner.ts')).toBe(true);
  });

  it('the Dispatch function loads no planner: it sends the round that was stored', () => {
    const graph = runtimeGraph('functions/dispatch.ts');
    expect(graph.has('lib/application/dispatch-round.ts')).toBe(true);
    expect(PLANNERS.filter((planner) => graph.has(planner)).map((planner) => chainTo(graph, planner))).toEqual([]);
  });
});
