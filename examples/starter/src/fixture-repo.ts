/**
 * The repository this starter reviews: three small files, kept as a module so the same bytes
 * reach the tests, the local cloud and the deployed worker Lambda (which bundles this module).
 * Replace it with your own source: a `load` that reads from S3, git or a file system.
 */
export const FIXTURE_REPO: Readonly<Record<string, string>> = {
  'src/app.ts': [
    "import { pad } from './util';",
    '// TODO: read the port from the environment',
    'const port = 8080;',
    'export const start = () => pad(String(port));',
    '// FIXME: handle SIGTERM',
    'export default start;',
  ].join('\n'),
  'src/util.ts': ['export const pad = (text: string) => text.padStart(8);', '// TODO trim before padding', "export const TAB = '\\t';"].join('\n'),
  'vendor/left-pad.js': ['// Vendored; not ours to fix.', '// TODO: upstream removed this', 'module.exports = (s, n) => s.padStart(n);', '// end'].join('\n'),
};
