/**
 * The environment variables the commands that call the API read, named once: the help text, the
 * commands and the end-to-end suite (test/e2e/global-setup.ts) use the same names.
 */
export const API_ENV = {
  /** The API's base URL, when `--api` is not given: a deployed stack's `ApiUrl` output. */
  apiUrl: 'TESSERA_API_URL',
  /** A JWT the API accepts, when neither `--token-file` nor `--token` is given. */
  token: 'TESSERA_TOKEN',
} as const;
