import { z } from 'zod';

/**
 * Characters that a terminal or an editor acts on instead of showing: C0 and C1 control
 * characters (ESC starts ANSI escape sequences, CR rewrites a line) and the bidirectional
 * overrides and isolates that reorder text. Free text a request carries is printed back to
 * people (statements, `tessera run`), so the contract refuses these in it.
 */
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const NO_CONTROL = /^[^\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$/;

/**
 * Free text without control characters (see {@link CONTROL_CHARACTERS}); the issue names the field.
 *
 * @example
 * PlainText.max(2000).safeParse('Tax \u001b[31myear').success // false
 */
export const PlainText = z
  .string()
  .regex(NO_CONTROL, 'must not contain control characters such as terminal escape sequences, line breaks or bidirectional overrides');

/**
 * Text with every control character written as a visible `\u001b`-style escape, for printing
 * stored text (goals, reasons, statements) to a terminal.
 *
 * @example
 * escapeControlCharacters('red \u001b[31m') // 'red \\u001b[31m'
 */
export const escapeControlCharacters = (text: string): string => text.replace(CONTROL_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
