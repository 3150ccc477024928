// A lesson's formulas as KaTeX's HTML (live_lesson.mjs draws them), with KaTeX's code loaded
// only when a formula is needed that the page has not drawn already.
//
// On a first visit Python draws its own lesson under this one until this one shows (lnlab.ui.live),
// with the same formulas, character for character (tests/js), and Streamlit's own KaTeX draws
// those. Loading static/katex as well would send a second copy of KaTeX (75 KiB of JavaScript)
// for formulas already on the page: a formula found there is taken from there. KaTeX itself
// loads once the user starts using the page (a key, a pointer, a touch, the focus), before any
// new formula is needed, or at once when a formula is on neither.

const OPTIONS = { throwOnError: false, output: "htmlAndMathml" };
const WAIT_FOR_PAGE_MS = 2000; // for Python's lesson to draw the formulas of the first view
const ACTIVITY = ["keydown", "pointerdown", "pointermove", "touchstart", "focusin", "wheel"];
const TEX = 'annotation[encoding="application/x-tex"]';

export class Formulas {
  /**
   * `load()`: a promise of KaTeX (lnlab.ui.live's loader: once per page). `redraw()`: draw
   * again once formulas that were drawn as their TeX meanwhile can be drawn. `patient()`:
   * whether to wait a while for the page to draw a missing formula (the first view, not shown
   * yet, over Python's lesson) before loading KaTeX. `failed(why)`: KaTeX did not load.
   */
  constructor({ load, redraw, patient, failed }) {
    this.load = load;
    this.redraw = redraw;
    this.patient = patient;
    this.failed = failed;
    this.katex = null;
    this.loading = false;
    this.onPage = new Map(); // TeX -> KaTeX's HTML of it, found on the page
    this.missing = new Set(); // TeX drawn as such until KaTeX or the page has it
    this.watch = null; // watching the page for the missing ones
    this.timer = 0;
    this.onActivity = () => this.need();
    for (const type of ACTIVITY) window.addEventListener(type, this.onActivity, true);
  }

  /** KaTeX's HTML of `latex`, or its TeX (in `missing`) until KaTeX or the page has it. */
  html(latex) {
    if (this.katex) return this.katex.renderToString(latex, OPTIONS);
    const tex = latex.trim();
    const found = this.onPage.get(tex) ?? this.find(tex);
    if (found !== undefined) return found;
    if (this.complete()) queueMicrotask(() => this.settle()); // once the draw is over
    this.missing.add(tex);
    return `<span class="lnlab-tex">${tex.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`)}</span>`;
  }

  /** Whether every formula drawn so far is KaTeX's. */
  complete() {
    return this.missing.size === 0;
  }

  /** After a draw that left formulas missing: wait a while for the page to draw them (if
   * `patient()`), else load KaTeX. */
  settle() {
    if (this.complete() || this.watch || this.loading) return;
    if (!this.patient()) {
      this.need();
      return;
    }
    this.watch = new MutationObserver(() => {
      if ([...this.missing].every((tex) => this.find(tex) !== undefined)) this.resolved();
    });
    this.watch.observe(document.body, { childList: true, subtree: true });
    this.timer = setTimeout(() => this.need(), WAIT_FOR_PAGE_MS);
  }

  /** Load KaTeX (once): the user has started, or a formula is on neither. */
  async need() {
    if (this.loading || this.katex) return;
    this.loading = true;
    this.stopListening();
    try {
      this.katex = await this.load();
    } catch (err) {
      this.loading = false;
      this.failed(`KaTeX did not load (${(err && err.message) || err})`);
      return;
    }
    if (!this.complete()) this.resolved();
  }

  /** The missing formulas can be drawn: draw again. */
  resolved() {
    this.stopWatching();
    this.missing.clear();
    this.redraw();
  }

  /** KaTeX's HTML of `tex` as the page drew it, if it did; what the page drew is kept. */
  find(tex) {
    for (const note of document.querySelectorAll(TEX)) {
      const source = note.textContent.trim();
      const katex = note.closest(".katex");
      if (katex && !this.onPage.has(source)) this.onPage.set(source, katex.outerHTML);
    }
    return this.onPage.get(tex);
  }

  stopWatching() {
    this.watch?.disconnect();
    this.watch = null;
    clearTimeout(this.timer);
  }

  stopListening() {
    for (const type of ACTIVITY) window.removeEventListener(type, this.onActivity, true);
  }

  stop() {
    this.stopWatching();
    this.stopListening();
  }
}
