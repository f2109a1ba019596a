import { describe, expect, it } from 'vitest';
import { VIEWER_PATHS, viewerPage, viewerUrl } from '../../lib/local/viewer-site';

const text = (body: string | Uint8Array | undefined): string => (typeof body === 'string' ? body : new TextDecoder().decode(body));

describe('the local viewer page', () => {
  it('serves the page at / with a CSP that allows only its own script and calls to its own origin', async () => {
    const page = await viewerPage('GET', VIEWER_PATHS.page);
    expect(page?.status).toBe(200);
    expect(page?.headers?.['content-type']).toBe('text/html; charset=utf-8');
    expect(page?.headers?.['content-security-policy']).toContain("script-src 'self'");
    expect(page?.headers?.['content-security-policy']).toContain("connect-src 'self'");
    expect(page?.headers?.['referrer-policy']).toBe('no-referrer');
    expect(text(page?.body)).toContain(`<script type="module" src="${VIEWER_PATHS.script}"></script>`);
    expect(text(page?.body)).toContain('<tessera-run></tessera-run>');
  });

  it('serves the app with the component bundled in, and nothing of zod or the AWS SDK', async () => {
    const script = await viewerPage('GET', VIEWER_PATHS.script);
    expect(script?.headers?.['content-type']).toBe('text/javascript; charset=utf-8');
    const body = text(script?.body);
    expect(body).toContain('tessera-run');
    expect(body).not.toMatch(/ZodError|@aws-sdk/);
  }, 60_000);

  it('leaves every other request to the API routes', async () => {
    expect(await viewerPage('GET', '/runs')).toBeUndefined();
    expect(await viewerPage('POST', '/')).toBeUndefined();
  });

  it('puts the token in the fragment, which browsers never send', () => {
    expect(viewerUrl('http://127.0.0.1:7700/', 'a b')).toBe('http://127.0.0.1:7700/#token=a%20b');
  });
});
