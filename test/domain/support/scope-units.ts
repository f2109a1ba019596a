import type { Scope } from '../../../lib/contract';

const DAY = 86_400_000;

/**
 * The units of a scope, for set arithmetic in property tests computed without the domain's
 * algebra: day numbers of a time range, the ids of an id scope, `file:line` keys of a paths
 * scope. A file without line ranges stands for lines 1..`wholeFileLines` (none by default).
 */
export const unitsOf = (scope: Scope, wholeFileLines = 0): Set<string> => {
  if ('from' in scope) {
    const units = new Set<string>();
    for (let t = Date.parse(`${scope.from}T00:00:00Z`); t < Date.parse(`${scope.toExclusive}T00:00:00Z`); t += DAY) units.add(String(t / DAY));
    return units;
  }
  if ('ids' in scope) return new Set(scope.ids);
  const whole: [number, number][] = wholeFileLines > 0 ? [[1, wholeFileLines]] : [];
  return new Set(scope.files.flatMap((f) => (f.lines ?? whole).flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, k) => `${f.path}:${a + k}`))));
};

/** The units of several scopes together. */
export const unitsOfAll = (scopes: readonly Scope[], wholeFileLines = 0): Set<string> => new Set(scopes.flatMap((s) => [...unitsOf(s, wholeFileLines)]));
