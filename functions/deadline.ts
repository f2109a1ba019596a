import { deadlineStep, DeadlineStep } from '../lib/application/deadline-steps';
import type { DeadlineDeps } from '../lib/application/deps';
import { executionsFor, ledgerAccessFromEnv, ledgerFor, queueFor } from '../lib/runtime/aws';
import { parseConfig, parseInput } from '../lib/runtime/config';
import { FUNCTION_CONFIG } from '../lib/runtime/environment';
import { createLogger, onColdStart } from '../lib/runtime/lambda';
import { actingFor } from '../lib/runtime/tenant-scope';

/** What the function needs, from its environment. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>): DeadlineDeps => {
  const config = parseConfig(FUNCTION_CONFIG.deadline, env);
  return {
    ledger: ledgerFor(config.TABLE_NAME, { access: ledgerAccessFromEnv(env) }),
    executions: executionsFor(),
    queue: queueFor(config.QUEUE_URLS),
    now: Date.now,
    logger: createLogger('deadline', env),
  };
};

/** One Map iteration's step (arm, await, hedge or seal) against the subtask's absolute deadline. */
export const createHandler = (deps: DeadlineDeps) => {
  const step = deadlineStep(deps);
  return async (event: unknown) => {
    const input = parseInput('Deadline', DeadlineStep, event);
    return actingFor(input.tenantId, () => step(input));
  };
};

export const handler = onColdStart(() => createHandler(depsFromEnv(process.env)));
