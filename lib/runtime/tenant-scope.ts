/**
 * The tenant a function is acting for, bound around the work it does for that tenant: the api
 * binds the caller's tenant around each request, dispatch and deadline the run's tenant around
 * each step, the worker the subtask's tenant around each delivery. The ledger client of a
 * tenant-scoped function signs every request with credentials of the bound tenant
 * (lib/runtime/ledger-credentials.ts), so a ledger call made outside a binding is refused rather
 * than signed with credentials for nobody in particular.
 *
 * One AsyncLocalStorage, so concurrent deliveries of one SQS batch each keep their own tenant.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<string>();

/**
 * Runs `work` acting for `tenantId`; every ledger call `work` makes, however deep, is made for
 * that tenant.
 *
 * @example
 * await actingFor(message.tenantId, () => runDelivery(message));
 */
export const actingFor = <T>(tenantId: string, work: () => Promise<T>): Promise<T> => scope.run(tenantId, work);

/** The tenant bound by the innermost {@link actingFor}, or `undefined` outside one. */
export const actingTenant = (): string | undefined => scope.getStore();
