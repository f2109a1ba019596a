import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeFilePath } from '../../lib/contract';
import { checkTiling, pathsAlgebra, validateRunRequest } from '../../lib/domain';
import { PLAN_OPTIONS, rejectionOf, testCatalog } from './fixtures';

/**
 * Path scopes have one written form (`normalizeFilePath`): every other spelling of a path is the
 * same file for tiling, and a path that could leave the tree (absolute, or with a `..` segment)
 * is refused with the field it was found in.
 */

/** A segment of a plain relative path: never empty, `.` or `..`, never containing `/`. */
const segment = fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,7}$/).filter((s) => s !== '.' && s !== '..');
const relativePath = fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments) => segments.join('/'));

/**
 * Another spelling of the same path: `./` in front, a doubled `/` or a `./` between segments, a
 * trailing `/`. Each separator is written in one of the three forms by `noise`.
 */
const spelling = (path: string) =>
  fc
    .record({
      lead: fc.constantFrom('', './', '././'),
      separators: fc.array(fc.constantFrom('/', '//', '/./', '/.//'), { minLength: path.split('/').length - 1, maxLength: path.split('/').length - 1 }),
      trail: fc.constantFrom('', '/', '/.'),
    })
    .map(({ lead, separators, trail }) => {
      const segments = path.split('/');
      return lead + segments.map((s, i) => (i === 0 ? s : `${separators[i - 1]}${s}`)).join('') + trail;
    });

const delegation = { worker: 'code-review', deadlineSeconds: 60, budget: { modelCalls: 1, estimatedCostPerCall: 1 } };
const budget = { modelCalls: 10, costLimit: 10 };

describe('normalizeFilePath', () => {
  it('maps every spelling of a path to the path itself, and is idempotent', () => {
    fc.assert(
      fc.property(
        relativePath.chain((path) => fc.tuple(fc.constant(path), spelling(path))),
        ([path, written]) => {
          expect(normalizeFilePath(written)).toEqual({ ok: true, path });
          expect(normalizeFilePath(path)).toEqual({ ok: true, path });
        },
      ),
    );
  });

  it('refuses a path that is absolute, has a .. segment, or is nothing but slashes and dots', () => {
    const parent = fc
      .tuple(fc.array(segment, { maxLength: 2 }), fc.array(segment, { maxLength: 2 }))
      .map(([before, after]) => [...before, '..', ...after].join('/'));
    const absolute = relativePath.map((path) => `/${path}`);
    const empty = fc.array(fc.constantFrom('.', ''), { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
    fc.assert(
      fc.property(fc.oneof(parent, absolute, empty), (path) => {
        expect(normalizeFilePath(path).ok).toBe(false);
      }),
    );
  });
});

describe('tiling over paths', () => {
  it('tiles a file once, however the universe and the subtasks spell it', () => {
    const files = fc.uniqueArray(relativePath, { minLength: 1, maxLength: 4 });
    const spelt = files.chain((paths) => fc.tuple(fc.constant(paths), fc.tuple(...paths.map(spelling)), fc.tuple(...paths.map(spelling))));
    fc.assert(
      fc.property(spelt, ([paths, inUniverse, inTile]) => {
        // The universe lists each file twice, once as written and once in another spelling.
        const universe = { dimension: 'paths' as const, files: [...paths, ...inUniverse].map((path) => ({ path })) };
        expect(pathsAlgebra.normalise(universe).size).toBe(paths.length);
        expect(checkTiling(universe, [{ id: 'A', scope: { files: inTile.map((path) => ({ path })) } }])).toEqual([]);
      }),
    );
  });

  it('finds the overlap of two subtasks that spell one file differently', () => {
    fc.assert(
      fc.property(
        relativePath.chain((path) => fc.tuple(fc.constant(path), spelling(path))),
        ([path, other]) => {
          const universe = { dimension: 'paths' as const, files: [{ path }] };
          const problems = checkTiling(universe, [
            { id: 'A', scope: { files: [{ path }] } },
            { id: 'B', scope: { files: [{ path: other }] } },
          ]);
          expect(problems.map((p) => [p.code, p.subtaskIds, p.files])).toEqual([['assignment_overlap', ['A', 'B'], [{ path }]]]);
        },
      ),
    );
  });
});

describe('POST /runs over paths', () => {
  it('accepts any spelling and plans the normalized path', () => {
    fc.assert(
      fc.property(
        relativePath.chain((path) => fc.tuple(fc.constant(path), spelling(path))),
        ([path, written]) => {
          const result = validateRunRequest(
            { goal: 'Review', universe: { dimension: 'paths', files: [{ path: written }] }, split: { ...delegation, parts: 1 }, budget },
            testCatalog,
            PLAN_OPTIONS,
          );
          expect(result.ok && result.request.universe).toEqual({ dimension: 'paths', files: [{ path }] });
          expect(result.ok && result.subtasks.map((s) => s.assigned)).toEqual([{ files: [{ path }] }]);
        },
      ),
    );
  });

  it('refuses an absolute path or a .. segment anywhere a path is written, naming that field', () => {
    const bad = fc.oneof(
      relativePath.map((path) => `/${path}`),
      fc.tuple(relativePath, relativePath).map(([a, b]) => `${a}/../${b}`),
      relativePath.map((path) => `../${path}`),
    );
    fc.assert(
      fc.property(fc.uniqueArray(relativePath, { minLength: 2, maxLength: 4 }), bad, fc.nat(), (paths, path, at) => {
        const index = at % paths.length;
        const files = paths.map((p, i) => ({ path: i === index ? path : p }));
        const problems = rejectionOf({ goal: 'Review', universe: { dimension: 'paths', files }, split: { ...delegation, parts: 1 }, budget });
        expect(problems).toEqual([expect.objectContaining({ code: 'invalid_request', path: `universe.files.${index}.path` })]);
        const inSubtask = rejectionOf({
          goal: 'Review',
          universe: { dimension: 'paths', files: paths.map((p) => ({ path: p })) },
          subtasks: [{ id: 'A', scope: { files: files }, ...delegation }],
          budget,
        });
        expect(inSubtask).toEqual([expect.objectContaining({ code: 'invalid_request', path: `subtasks.0.scope.files.${index}.path` })]);
      }),
    );
  });

  it('names the reason for each kind of refused path', () => {
    const problems = rejectionOf({
      goal: 'Review',
      universe: { dimension: 'paths', files: [{ path: 'src/a.ts' }, { path: '/etc/passwd' }, { path: '../../../etc/passwd' }, { path: './' }] },
      split: { ...delegation, parts: 1 },
      budget,
    });
    expect(problems).toEqual([
      {
        code: 'invalid_request',
        path: 'universe.files.1.path',
        message: 'must be a relative path: an absolute path (one starting with /) is refused (got "/etc/passwd")',
      },
      {
        code: 'invalid_request',
        path: 'universe.files.2.path',
        message: 'must not contain a .. segment: a path names a file inside the tree the worker reads, in one way only (got "../../../etc/passwd")',
      },
      {
        code: 'invalid_request',
        path: 'universe.files.3.path',
        message: 'must name a file: it is empty once its . segments and extra slashes are removed (got "./")',
      },
    ]);
  });
});
