/**
 * The local cloud's viewer page (served at `/` by lib/local/viewer-site.ts): the tenant's runs from
 * `GET /runs` and the chosen run drawn by `<tessera-run>`. The token is read from the URL fragment
 * (`/#token=…`), which browsers never send to a server; it leaves the page only as the bearer
 * header of the API requests.
 */
import type { RunList, RunSummary } from '../../contract';
import { defineTesseraRun } from '../../web/element';

const LIST_INTERVAL_MS = 2000;

const fragment = (): URLSearchParams => new URLSearchParams(location.hash.replace(/^#/, ''));

const setFragment = (values: Record<string, string>): void => {
  const next = fragment();
  for (const [name, value] of Object.entries(values)) next.set(name, value);
  history.replaceState(null, '', `#${next.toString()}`);
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
  const token = fragment().get('token');
  const list = document.querySelector('#runs tbody') as HTMLTableSectionElement;
  const listStatus = document.querySelector('#runs-status') as HTMLElement;
  const viewer = document.querySelector('tessera-run') as HTMLElementTagNameMap['tessera-run'];
  if (!token) {
    listStatus.textContent = 'No token: open the address that `tessera serve` printed (it ends in #token=…).';
    return;
  }
  const apiUrl = location.origin;
  viewer.tokenSource = () => token;
  viewer.setAttribute('api-url', apiUrl);

  const show = (runId: string) => {
    setFragment({ run: runId });
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
      const link = text('a', run.goal || run.runId, { href: '#' });
      link.addEventListener('click', (event) => {
        event.preventDefault();
        show(run.runId);
      });
      const goal = document.createElement('td');
      goal.append(link);
      const progress = `${run.progress.terminal}/${run.progress.dispatched}`;
      row.append(goal, text('td', run.status), text('td', completeText(run.complete)), text('td', progress), text('td', new Date(run.createdAt).toLocaleString()));
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
        listStatus.textContent = body.runs.length === 0 ? 'No runs yet: try `npx tessera run examples/scout.json`.' : `${body.runs.length} run${body.runs.length === 1 ? '' : 's'}, newest first.`;
        drawList(body.runs);
      } else {
        listStatus.textContent = response.status === 401 ? 'The API refused the token: the local cloud was restarted? Open the address it printed.' : `GET /runs answered ${response.status}.`;
        const chosen = fragment().get('run');
        if (chosen) show(chosen);
      }
    } catch (error) {
      listStatus.textContent = `The API could not be reached: ${(error as Error).message}`;
    }
  };

  void refresh();
  setInterval(() => {
    if (document.visibilityState === 'visible') void refresh();
  }, LIST_INTERVAL_MS);
};

main();
