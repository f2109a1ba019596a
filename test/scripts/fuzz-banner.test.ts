import { describe, expect, it } from 'vitest';
import { unbanner } from '../../scripts/fuzz/banner';

describe('the fuzz suite redraws Schemathesis banners', () => {
  it('turns a pytest-style closing banner into dashes of the same width, keeping its words', () => {
    const closing = '============================= 1 warning in 55.12s ==============================';
    const redrawn = unbanner(closing);
    expect(redrawn).toBe('----------------------------- 1 warning in 55.12s ------------------------------');
    expect(redrawn).toHaveLength(closing.length);
  });

  it('redraws section banners too', () => {
    expect(unbanner('=== SUMMARY ===')).toBe('--- SUMMARY ---');
  });

  it('leaves every other line alone, including lines that only contain equals signs inside', () => {
    for (const line of ['  385 generated, 385 passed', 'a == b', '======', '== no closing', '']) {
      expect(unbanner(line)).toBe(line);
    }
  });
});
