/**
 * Evaluates an Amazon States Language *reference path* (`$.a.b`, `$['a'][0]`, `$$.Execution.Id`):
 * the restricted JSONPath that fields such as `TimeoutSecondsPath` accept, with no wildcards or
 * filters. The callback emulation needs it to compute a task's timeout exactly as
 * aws-local-stepfunctions does (against the Task's effective input, `$$` against the context).
 */

const SEGMENT = /\.([^.[\]]+)|\[(\d+)\]|\['([^']*)'\]/y;

const child = (value: unknown, key: string | number): unknown => {
  if (typeof key === 'number') return Array.isArray(value) ? value[key] : undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
};

const keysOf = (path: string, start: number): (string | number)[] | undefined => {
  const keys: (string | number)[] = [];
  SEGMENT.lastIndex = start;
  while (SEGMENT.lastIndex < path.length) {
    const match = SEGMENT.exec(path);
    if (!match) return undefined;
    keys.push(match[1] ?? (match[2] === undefined ? (match[3] as string) : Number(match[2])));
  }
  return keys;
};

/**
 * The value at a reference path, or `undefined` when the path is malformed or points at nothing.
 *
 * @example
 * readReferencePath('$.Payload.timeoutSeconds', { Payload: { timeoutSeconds: 30 } }, {}) // 30
 * readReferencePath('$$.Execution.Id', {}, { Execution: { Id: 'arn:…' } })               // 'arn:…'
 */
export const readReferencePath = (path: string, input: unknown, context: unknown): unknown => {
  const fromContext = path.startsWith('$$');
  if (!path.startsWith('$')) return undefined;
  const keys = keysOf(path, fromContext ? 2 : 1);
  if (!keys) return undefined;
  return keys.reduce<unknown>((value, key) => child(value, key), fromContext ? context : input);
};
