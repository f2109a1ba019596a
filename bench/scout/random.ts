/**
 * A small seeded PRNG for the Scout replay: mulberry32, seeded from a 32-bit mix of a seed and
 * keys (run index, attempt), so every attempt of every run draws from its own stream. Two
 * policies replaying run 17 therefore see the same account and the same first-attempt noise:
 * their figures differ only by what the policies do (common random numbers).
 */
export interface Random {
  /** Uniform in [0, 1). */
  uniform(): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
}

/** A 32-bit avalanche mix (the finaliser of MurmurHash3). */
const mix32 = (value: number): number => {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
};

/**
 * The stream for `seed` and `keys`: the same arguments always give the same sequence.
 *
 * @example
 * randomFor(15, 3, 0).uniform() === randomFor(15, 3, 0).uniform() // true
 */
export const randomFor = (seed: number, ...keys: number[]): Random => {
  let state = keys.reduce((h, key) => mix32(h ^ mix32(key + 0x9e3779b9)), mix32(seed));
  const uniform = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    uniform,
    normal: () => {
      const u = 1 - uniform(); // (0, 1]: log is finite
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
    },
  };
};
