import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { HttpReply } from './http-server';

/**
 * The local cloud's viewer page: `GET /` is a small HTML page and `GET /viewer.js` its script
 * (lib/local/viewer/app.ts with the `<tessera-run>` component, bundled by esbuild on the first
 * request). Both are public and static: the page reads the token from the URL fragment, which
 * never reaches a server, and sends it only as the bearer header of its API calls. Deployed
 * stacks serve no page; a product embeds the component itself (docs/embedding.md).
 */

/** Where the page and its script are served. */
export const VIEWER_PATHS = { page: '/', script: '/viewer.js' } as const;

/**
 * The address that opens the viewer signed in as the token's tenant.
 *
 * @example
 * viewerUrl('http://127.0.0.1:7700', token) // 'http://127.0.0.1:7700/#token=eyJ…'
 */
export const viewerUrl = (apiUrl: string, token: string): string => `${apiUrl.replace(/\/$/, '')}${VIEWER_PATHS.page}#token=${encodeURIComponent(token)}`;

/** Only the page's own script, styles in its component, and calls to its own origin. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tessera local viewer</title>
<style>
  body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 0; color: #1a1a1a; background: #fff; }
  header, main { max-width: 1100px; margin: 0 auto; padding: .75rem 1rem; }
  h1 { font-size: 1.2rem; margin: 0; }
  h2 { font-size: 1rem; margin: 1rem 0 .5rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e5e7eb; }
  tr[aria-current] { background: #eef2ff; }
  a { color: #1d4ed8; }
  .note { color: #4b5563; margin: .25rem 0; }
</style>
<script type="module" src="${VIEWER_PATHS.script}"></script>
</head>
<body>
<header><h1>tessera local viewer</h1><p class="note">The local cloud's runs, as the token's tenant sees them. Runs live in memory and end with the cloud.</p></header>
<main>
<section aria-labelledby="runs-title">
<h2 id="runs-title">Runs</h2>
<p id="runs-status" class="note" role="status">Loading…</p>
<table id="runs"><thead><tr><th scope="col">Goal</th><th scope="col">Status</th><th scope="col">Coverage</th><th scope="col">Subtasks ended</th><th scope="col">Created</th></tr></thead><tbody></tbody></table>
</section>
<section aria-labelledby="run-title">
<h2 id="run-title">Run</h2>
<tessera-run></tessera-run>
</section>
</main>
</body>
</html>
`;

/** The app's entry: the TypeScript source in a checkout, the emitted JavaScript in the package. */
const entryPoint = (): string => {
  const source = fileURLToPath(new URL('./viewer/app.ts', import.meta.url));
  return existsSync(source) ? source : fileURLToPath(new URL('./viewer/app.js', import.meta.url));
};

let bundled: Promise<string> | undefined;

/** The app and the component as one browser script, built once per process. */
export const viewerScript = (): Promise<string> =>
  (bundled ??= import('esbuild').then(async ({ build }) => {
    const result = await build({
      entryPoints: [entryPoint()],
      bundle: true,
      format: 'esm',
      target: 'es2022',
      platform: 'browser',
      write: false,
      minify: true,
      legalComments: 'none',
      logLevel: 'silent',
    });
    return result.outputFiles[0]?.text ?? '';
  }));

/**
 * Answers `GET /` and `GET /viewer.js`; `undefined` for every other request, which then goes to
 * the API's routes.
 *
 * @example
 * const reply = await viewerPage('GET', '/');
 */
export const viewerPage = async (method: string, pathname: string): Promise<HttpReply | undefined> => {
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  if (pathname === VIEWER_PATHS.page || pathname === '/index.html') {
    return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS }, body: PAGE };
  }
  if (pathname === VIEWER_PATHS.script) {
    return { status: 200, headers: { 'content-type': 'text/javascript; charset=utf-8', ...SECURITY_HEADERS }, body: await viewerScript() };
  }
  return undefined;
};
