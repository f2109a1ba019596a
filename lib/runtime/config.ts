import { z } from 'zod';
import { ConfigError, InvalidTaskInput } from './errors';

/** An environment variable holding JSON, parsed then validated by `schema`. */
export const jsonVariable = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);

/** A positive integer written as a string, as environment variables are. */
export const intVariable = (fallback?: number) => {
  const base = z.coerce.number().int().positive();
  return fallback === undefined ? base : base.default(fallback);
};

/**
 * Parses a function's environment once, at cold start. A missing or malformed variable throws
 * `ConfigError` naming every bad variable, so a misdeployed function fails loudly and at once.
 *
 * @example
 * const config = parseConfig(z.object({ TABLE_NAME: z.string().min(1) }), process.env);
 */
export const parseConfig = <T extends z.ZodObject>(schema: T, env: Readonly<Record<string, string | undefined>>): z.infer<T> => {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => ({
      name: String(issue.path[0] ?? '(environment)'),
      problem: issue.code === 'invalid_type' ? 'is missing' : issue.message,
    })),
  );
};

/**
 * Parses a Step Functions task input or an SQS body with a schema, naming the task on failure.
 */
export const parseInput = <T extends z.ZodType>(task: string, schema: T, value: unknown): z.infer<T> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidTaskInput(
    task,
    result.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`),
  );
};
