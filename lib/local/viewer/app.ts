/**
 * The local cloud's viewer page (served at `/` by lib/local/viewer-site.ts): the tenant's runs from
 * `GET /runs` and the chosen run drawn by `<tessera-run>`.
 *
 * The token is read from the URL fragment (`/#token=…`), which browsers never send to a server;
 * it leaves the page only as the bearer header of the API requests. The page keeps it in this
 * origin's local storage and takes it out of the address, so that the address names only the run
 * (`/#run=<id>`): run links are plain links, an address can be copied or bookmarked without the
 * token in it, and it opens that run in any tab of the browser once the token has been seen.
 */
import type { RunList, RunSummary } from '../../contract';
import { defineTesseraRun } from '../../web/element';

const LIST_INTERVAL_MS = 2000;

/** Where the page keeps the token it was opened with (this origin's storage only). */
const TOKEN_KEY = 'tessera.viewer.token';

const fragment = (): URLSearchParams => new URLSearchParams(location.hash.replace(/^#/, ''));

/** The address of one run in the viewer: `#run=<id>`. */
const runHref = (runId: string): string => `#${new URLSearchParams({ run: runId }).toString()}`;

/**
 * The token: from the fragment when it carries one (kept, then taken out of the address), else the
 * one kept from before. Storage can be refused (a sandboxed frame); the fragment's token still works.
 */
const takeToken = (): string | null => {
  const params = fragment();
  const given = params.get('token');
  if (given) {
    try {
      localStorage.setItem(TOKEN_KEY, given);
      params.delete('token');
      history.replaceState(null, '', params.size > 0 ? `#${params.toString()}` : location.pathname);
    } catch {
      // Nothing kept: the token serves this page until it is reloaded.
    }
    return given;
  }
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
};

const text = <K extends keyof HTMLElementTagNameMap>(tag: K, content: string, attributes: Record<string, string> = {}): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag);
  node.textContent = content;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
};

const completeText = (complete: boolean | null): string => (complete === true ? 'complete' : complete === false ? 'incomplete' : '–');

const main = (): void => {
  defineTesseraRun();
  const token = takeToken();
  const list = document.querySelector('#runs tbody') as HTMLTableSectionElement;
  const listStatus = document.querySelector('#runs-status') as HTMLElement;
  const viewer = document.querySelector('tessera-run') as HTMLElementTagNameMap['tessera-run'];
  if (!token) {
    listStatus.textContent = 'No token: open the address that `tessera serve` printed (it ends in #token=…) once in this browser.';
    return;
  }
  const apiUrl = location.origin;
  viewer.tokenSource = () => token;
  viewer.setAttribute('api-url', apiUrl);

  const show = (runId: string) => {
    // The address names the run drawn, so it can be copied; replaced, not pushed, when the page
    // chooses the newest run itself.
    if (fragment().get('run') !== runId) history.replaceState(null, '', runHref(runId));
    if (viewer.getAttribute('run-id') !== runId) viewer.setAttribute('run-id', runId);
    for (const row of list.querySelectorAll('tr')) row.toggleAttribute('aria-current', row.dataset.runId === runId);
    for (const row of list.querySelectorAll('tr')) row.querySelector('a')?.setAttribute('aria-current', String(row.dataset.runId === runId));
  };

  let drawn = '';
  const drawList = (runs: readonly RunSummary[]) => {
    // Redraw only what changed, so a keyboard user's focus in the list survives the refresh.
    const key = JSON.stringify(runs);
    if (key === drawn) return;
    drawn = key;
    const rows = runs.map((run) => {
      const row = document.createElement('tr');
      row.dataset.runId = run.runId;
      row.dataset.status = run.status;
      // A real link: following it changes the fragment, and `hashchange` draws that run.
      const link = text('a', run.goal || run.runId, { href: runHref(run.runId) });
      const goal = document.createElement('td');
      goal.append(link);
      const progress = `${run.progress.terminal}/${run.progress.dispatched}`;
      row.append(
        goal,
        text('td', run.status),
        text('td', completeText(run.complete)),
        text('td', progress),
        text('td', new Date(run.createdAt).toLocaleString()),
      );
      return row;
    });
    list.replaceChildren(...rows);
    const chosen = fragment().get('run') ?? runs[0]?.runId;
    if (chosen) show(chosen);
  };

  const refresh = async (): Promise<void> => {
    try {
      const response = await fetch(`${apiUrl}/runs?limit=50`, { headers: { authorization: `Bearer ${token}` }, cache: 'no-store' });
      if (response.ok) {
        const body = (await response.json()) as RunList;
        listStatus.textContent =
          body.runs.length === 0
            ? 'No runs yet: try `npx tessera run examples/scout.json`.'
            : `${body.runs.length} run${body.runs.length === 1 ? '' : 's'}, newest first.`;
        drawList(body.runs);
      } else {
        listStatus.textContent =
          response.status === 401
            ? 'The API refused the token: the local cloud was restarted? Open the address it printed.'
            : `GET /runs answered ${response.status}.`;
        const chosen = fragment().get('run');
        if (chosen) show(chosen);
      }
    } catch (error) {
      listStatus.textContent = `The API could not be reached: ${(error as Error).message}`;
    }
  };

  window.addEventListener('hashchange', () => {
    const chosen = fragment().get('run');
    if (chosen) show(chosen);
  });
  void refresh();
  setInterval(() => {
    if (document.visibilityState === 'visible') void refresh();
  }, LIST_INTERVAL_MS);
};

main();
