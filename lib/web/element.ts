import type { RunResource } from '../contract';
import { pictureOf, type Picture } from './geometry';
import { watchRun, type TokenSource, type Watch, type WatchError } from './live';
import { renderDefs, renderHeader, renderLegend, renderLists, renderPicture } from './render';
import { STYLES } from './styles';
import { renderSynthesis } from './synthesis';

/** The tag the component registers under by default. */
export const TESSERA_RUN_TAG = 'tessera-run';

/** Fired with the run resource each time it changes: `el.addEventListener('tessera-run-change', …)`. */
export const RUN_CHANGE_EVENT = 'tessera-run-change';
/** Fired with a `WatchError` when a request for the run fails. */
export const RUN_ERROR_EVENT = 'tessera-run-error';

// In Node (server rendering, tests of the pure modules) there is no HTMLElement; the class is then
// defined against a stand-in and never registered.
const Base: typeof HTMLElement = typeof HTMLElement === 'undefined' ? (class {} as typeof HTMLElement) : HTMLElement;

/**
 * `<tessera-run api-url="https://…" run-id="…">`: draws one run's coverage and follows it live
 * until it ends. Set `tokenSource` (a function returning a bearer token) before or after the
 * attributes; the first request waits for it. Or set `run` to a run resource to draw it without
 * fetching.
 *
 * @example
 * const el = document.createElement('tessera-run');
 * el.tokenSource = async () => (await auth.getToken()).accessToken;
 * el.setAttribute('api-url', 'https://api.example.com');
 * el.setAttribute('run-id', runId);
 * document.body.append(el);
 */
export class TesseraRunElement extends Base {
  static readonly observedAttributes = ['api-url', 'run-id'];

  #tokenSource: TokenSource | undefined;
  #run: RunResource | undefined;
  #watch: Watch | undefined;
  #error: WatchError | undefined;
  #root: ShadowRoot | undefined;

  /** Where bearer tokens come from; called before every request. */
  get tokenSource(): TokenSource | undefined {
    return this.#tokenSource;
  }
  set tokenSource(source: TokenSource | undefined) {
    this.#tokenSource = source;
    this.#restart();
  }

  /** The run resource drawn now. Setting it draws that run and stops fetching. */
  get run(): RunResource | undefined {
    return this.#run;
  }
  set run(run: RunResource | undefined) {
    this.#stop();
    this.#run = run;
    this.#render();
  }

  /** The drawn run's geometry, for tests and for pages that add their own views. */
  get picture(): Picture | undefined {
    return this.#run ? pictureOf(this.#run) : undefined;
  }

  connectedCallback(): void {
    this.#root ??= this.attachShadow({ mode: 'open' });
    this.#render();
    this.#restart();
  }

  disconnectedCallback(): void {
    this.#stop();
  }

  attributeChangedCallback(_name: string, previous: string | null, next: string | null): void {
    if (previous === next) return;
    this.#run = undefined;
    this.#error = undefined;
    this.#restart();
  }

  #stop(): void {
    this.#watch?.stop();
    this.#watch = undefined;
  }

  #restart(): void {
    this.#stop();
    const apiUrl = this.getAttribute('api-url');
    const runId = this.getAttribute('run-id');
    if (!this.isConnected || !apiUrl || !runId || !this.#tokenSource) {
      this.#render();
      return;
    }
    const tokenSource = this.#tokenSource;
    this.#watch = watchRun({
      apiUrl,
      runId,
      tokenSource,
      onRun: (run) => {
        this.#run = run;
        this.#error = undefined;
        this.#render();
        this.dispatchEvent(new CustomEvent(RUN_CHANGE_EVENT, { detail: run }));
      },
      onError: (error) => {
        this.#error = error;
        this.#render();
        this.dispatchEvent(new CustomEvent(RUN_ERROR_EVENT, { detail: error }));
      },
    });
  }

  #render(): void {
    const root = this.#root;
    if (!root) return;
    const doc = this.ownerDocument;
    // Keep focus on the same mark across a redraw, so live updates do not throw a keyboard user out.
    const focused = root.activeElement;
    const focusKey = focused
      ? ['data-gap', 'data-overlap', 'data-question', 'data-subtask']
          .map((a) => focused.getAttribute(a) !== null && `[${a}="${CSS.escape(focused.getAttribute(a) ?? '')}"]`)
          .find(Boolean)
      : undefined;

    const style = doc.createElement('style');
    style.textContent = STYLES;
    const frame = doc.createElement('div');
    frame.className = 'frame';
    const tip = doc.createElement('div');
    tip.className = 'tip';
    tip.hidden = true;
    tip.setAttribute('role', 'tooltip');
    tip.id = 'tip';

    const children: Node[] = [style, renderDefs(doc)];
    if (this.#run) {
      const picture = pictureOf(this.#run);
      this.dataset.status = picture.status;
      this.dataset.verdict = picture.verdict;
      const lists = renderLists(doc, picture);
      const synthesis = renderSynthesis(doc, this.#run.answer?.synthesis);
      frame.append(
        renderHeader(doc, picture),
        renderPicture(doc, picture),
        ...(lists ? [lists] : []),
        ...(synthesis ? [synthesis] : []),
        renderLegend(doc),
        tip,
      );
    } else {
      delete this.dataset.status;
      delete this.dataset.verdict;
      const waiting = doc.createElement('p');
      waiting.className = 'meta';
      waiting.textContent = this.#tokenSource ? 'Loading the run…' : 'Waiting for a token source.';
      frame.append(waiting);
    }
    if (this.#error) {
      const error = doc.createElement('p');
      error.className = 'error';
      error.setAttribute('role', 'status');
      error.textContent = this.#error.final ? `${this.#error.message}; stopped.` : `${this.#error.message}; trying again.`;
      frame.append(error);
    }
    children.push(frame);
    root.replaceChildren(...children);
    this.#wireTips(frame, tip);
    if (focusKey) (root.querySelector(focusKey) as SVGElement | null)?.focus();
  }

  /** Hover and focus show a mark's text next to it. */
  #wireTips(frame: HTMLElement, tip: HTMLElement): void {
    const show = (target: EventTarget | null) => {
      const mark = target instanceof Element ? target.closest('[data-tip]') : null;
      if (!mark) {
        tip.hidden = true;
        return;
      }
      tip.textContent = mark.getAttribute('data-tip');
      tip.hidden = false;
      const box = mark.getBoundingClientRect();
      // Under the mark's drawn range (a lane's assignment, a gap's span), not its row label.
      const anchor = (mark.querySelector('[data-assigned], [data-unanswered], [class^="gap-"], .overlap') ?? mark).getBoundingClientRect();
      const frameBox = frame.getBoundingClientRect();
      tip.style.left = `${Math.max(0, Math.min(anchor.left - frameBox.left, frameBox.width - tip.offsetWidth - 4))}px`;
      tip.style.top = `${box.bottom - frameBox.top + 6}px`;
    };
    frame.addEventListener('mouseover', (event) => show(event.target));
    frame.addEventListener('focusin', (event) => show(event.target));
    frame.addEventListener('mouseleave', () => (tip.hidden = true));
    frame.addEventListener('focusout', () => (tip.hidden = true));
    frame.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') tip.hidden = true;
    });
  }
}

/**
 * Registers `<tessera-run>` (or another tag) once; safe to call again.
 *
 * @example
 * defineTesseraRun();
 */
export const defineTesseraRun = (tag: string = TESSERA_RUN_TAG): void => {
  if (typeof customElements === 'undefined' || customElements.get(tag)) return;
  customElements.define(tag, class extends TesseraRunElement {});
};

declare global {
  interface HTMLElementTagNameMap {
    'tessera-run': TesseraRunElement;
  }
}
