import dns, { type LookupAddress, type LookupOptions } from 'node:dns';

/**
 * fauxqs names queues `http://sqs.<region>.localhost:<port>/000000000000/<name>`, and the SQS
 * client sends each request to the host of its QueueUrl, so handlers reach the emulator through
 * `sqs.<region>.localhost`. RFC 6761 reserves `*.localhost` for loopback, but glibc without
 * systemd-resolved does not resolve subdomains of localhost. While a local cloud runs, this
 * process resolves them to 127.0.0.1; every other name goes to the system resolver unchanged.
 */

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

const LOOPBACK = { address: '127.0.0.1', family: 4 } as const;

let installed = 0;
let original: typeof dns.lookup | undefined;

const isLocalhost = (hostname: string): boolean => hostname === 'localhost' || hostname.endsWith('.localhost');

const patchedLookup = (hostname: string, options: unknown, callback?: unknown): void => {
  const done = (typeof options === 'function' ? options : callback) as LookupCallback;
  const settings = (typeof options === 'object' && options !== null ? options : {}) as LookupOptions;
  if (!isLocalhost(hostname)) {
    (original as unknown as (...args: unknown[]) => void).call(dns, hostname, options, callback);
    return;
  }
  if (settings.all) process.nextTick(() => done(null, [{ ...LOOPBACK }]));
  else process.nextTick(() => done(null, LOOPBACK.address, LOOPBACK.family));
};

/**
 * Resolves `*.localhost` to 127.0.0.1 in this process until the returned function is called.
 * Nested installs are counted, so two local clouds in one process do not undo each other.
 *
 * @example
 * const release = resolveLocalhostSubdomains();
 * // … SQS calls to http://sqs.us-east-1.localhost:4566 …
 * release();
 */
export const resolveLocalhostSubdomains = (): (() => void) => {
  if (installed === 0) {
    original = dns.lookup;
    dns.lookup = patchedLookup as unknown as typeof dns.lookup;
  }
  installed += 1;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    installed -= 1;
    if (installed === 0 && original) {
      dns.lookup = original;
      original = undefined;
    }
  };
};

/**
 * The same endpoint addressed by IP: fauxqs's `sqs.<region>.localhost` host resolves only inside
 * the process that runs the local cloud, so anything printed for people or handed to another
 * process uses 127.0.0.1.
 *
 * @example
 * loopbackOrigin('http://sqs.us-east-1.localhost:4566') // 'http://127.0.0.1:4566'
 */
export const loopbackOrigin = (endpoint: string): string => {
  const url = new URL(endpoint);
  url.hostname = '127.0.0.1';
  return url.origin;
};
