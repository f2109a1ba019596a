/**
 * The example app plus the fault-injection kind `chaos`: the worker module of a stack that runs
 * the end-to-end fault suite (`-c tessera:faultInjection=true`) and of the local cloud that suite
 * starts. A production stack deploys `workers.ts`, which has no `chaos` kind and no queue for it.
 */
import { createRegistry } from '../../lib/workers';
import { chaosKind } from './chaos';
import { createReferenceKinds } from './kinds';

export const registry = createRegistry([...createReferenceKinds(), chaosKind]);
