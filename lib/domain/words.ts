/** Small helpers for sentences rendered from structured data (statements, problem messages). */

const SMALL = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve'];

/**
 * Spells out zero to twelve, as style guides do for small counts; larger numbers get digits
 * with thousands separators (written by hand so the output does not depend on a locale).
 *
 * @example
 * numberWord(4)     // 'four'
 * numberWord(12500) // '12,500'
 */
export const numberWord = (n: number): string => SMALL[n] ?? String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** Upper-cases the first letter. @example capitalise('one gap') // 'One gap' */
export const capitalise = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * English plural of a singular noun, good enough for the nouns reports use.
 *
 * @example
 * plural('ticket') // 'tickets'
 * plural('entry')  // 'entries'
 */
export const plural = (noun: string): string => {
  if (/[^aeiou]y$/i.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/i.test(noun)) return `${noun}es`;
  return `${noun}s`;
};

/** Nouns whose singular is spelled like their plural. */
const SAME_IN_SINGULAR = new Set(['news', 'series', 'species']);

/**
 * Singular of a plural noun such as a worker kind's `recordNoun` (`transactions`).
 *
 * @example
 * singular('entries') // 'entry'
 */
export const singular = (noun: string): string => {
  if (SAME_IN_SINGULAR.has(noun.toLowerCase())) return noun;
  if (/ies$/i.test(noun)) return `${noun.slice(0, -3)}y`;
  if (/(ss|x|z|ch|sh)es$/i.test(noun)) return noun.slice(0, -2);
  if (/[^s]s$/i.test(noun)) return noun.slice(0, -1);
  return noun;
};

/**
 * A count with its noun, spelled out when small: `zero transactions`, `one transaction`.
 * `noun` is the plural form.
 *
 * @example
 * countOf(1, 'partitions') // 'one partition'
 */
export const countOf = (n: number, pluralNoun: string): string => `${numberWord(n)} ${n === 1 ? singular(pluralNoun) : pluralNoun}`;

/**
 * Joins items as prose: `A`, `A and B`, `A, B and C`.
 *
 * @example
 * listWords(['q1', 'q3']) // 'q1 and q3'
 */
export const listWords = (items: readonly string[]): string => {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
};

/**
 * At most `max` items, then how many more: `t-1, t-2 and 3 more`.
 *
 * @example
 * listSome(['a', 'b', 'c', 'd'], 2) // 'a, b and 2 more'
 */
export const listSome = (items: readonly string[], max: number): string =>
  items.length <= max ? listWords(items) : `${items.slice(0, max).join(', ')} and ${numberWord(items.length - max)} more`;
