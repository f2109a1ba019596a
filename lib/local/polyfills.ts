/**
 * `aws-local-stepfunctions@3` calls `Promise.withResolvers` (ES2024) in every Task state, and
 * Node 20 does not have it. Node 22 does, and the Lambda runtime is Node 24, so this shim exists
 * only for the local cloud. We chose a polyfill over running the local cloud on the `node@22`
 * binary because the CLI, the tests and the emulators all run in one Node 20 process; switching
 * the whole toolchain to another binary for one missing static method would cost more than it saves.
 *
 * The shim is installed only when the method is missing, so on Node 22 this module does nothing.
 */

interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

type WithResolvers = <T>() => Resolvers<T>;

/**
 * Installs `Promise.withResolvers` when the runtime lacks it. Safe to call any number of times.
 *
 * @example
 * installPromiseWithResolvers();
 * const { promise, resolve } = Promise.withResolvers<number>();
 */
export const installPromiseWithResolvers = (): void => {
  const target = Promise as unknown as { withResolvers?: WithResolvers };
  if (typeof target.withResolvers === 'function') return;
  const withResolvers: WithResolvers = <T>() => {
    let resolve!: Resolvers<T>['resolve'];
    let reject!: Resolvers<T>['reject'];
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
  Object.defineProperty(Promise, 'withResolvers', { value: withResolvers, writable: true, configurable: true });
};

installPromiseWithResolvers();
