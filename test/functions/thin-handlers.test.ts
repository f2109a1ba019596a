import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPOSITORY, sourcesUnder, specifiersOf } from '../support/imports';

/**
 * Handlers parse their event, call one use case of lib/application and map its result; the rules
 * (which ledger error means what, the final status, the answer's prose) live in the use cases.
 */
const HANDLERS = sourcesUnder('functions');
const source = (file: string) => readFileSync(join(REPOSITORY, file), 'utf8');

describe('the handlers in functions/', () => {
  it('are the five functions', () => {
    expect(HANDLERS.sort()).toEqual(['functions/api.ts', 'functions/deadline.ts', 'functions/dispatch.ts', 'functions/reconcile.ts', 'functions/worker.ts']);
  });

  it.each(HANDLERS)('%s is 40 lines or fewer', (file) => {
    expect(source(file).trimEnd().split('\n').length).toBeLessThanOrEqual(40);
  });

  it.each(HANDLERS)('%s holds no test on an error type and no try/catch', (file) => {
    expect(source(file)).not.toMatch(/\binstanceof\b|\bcatch\s*\(|\.catch\(/);
  });

  it.each(HANDLERS)('%s reaches the adapters only through lib/application and the runtime glue', (file) => {
    const reached = specifiersOf(source(file)).filter((specifier) => /\/lib\/(ledger|queue|orchestration|domain)\b/.test(specifier));
    expect(reached).toEqual([]);
  });

  it.each(HANDLERS)('%s calls exactly one use case per event (one per route in the api)', (file) => {
    const application = specifiersOf(source(file)).filter((specifier) => specifier.includes('/lib/application'));
    expect(application.length).toBeGreaterThan(0);
    const built = [...source(file).matchAll(/\b([a-z]\w*)\(deps\)/g)].map((m) => m[1]);
    const routes = [...source(file).matchAll(/'(?:GET|POST|PUT|DELETE) \/[^']*':/g)].length;
    expect(built.length).toBe(file === 'functions/api.ts' ? routes : 1);
    expect(new Set(built).size).toBe(built.length);
  });
});
