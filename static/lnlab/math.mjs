// A lesson's formulas as MathML the browser draws itself (live_lesson.mjs draws them), written
// as lnlab.teach.mathml writes Python's: one <math> per piece, cut where a line may break (after
// a top-level =, + or \approx, and at \allowbreak), hidden from screen readers, which read the
// whole formula as one <math>, in a span whose data-tex is the LaTeX.
// KaTeX writes each piece's MathML, and its code loads only when a formula is needed that the
// page has not drawn already.
//
// Python sends the formulas of the section on screen as it writes them (lnlab.ui.live), the same
// formulas character for character (tests/js), which the page's assist script draws: a formula
// found on the page is taken from there, so a first view sends no formula library at all.
// KaTeX itself (75 KiB of JavaScript) loads once the user starts using the page (a key, a
// pointer, a touch, the focus), before any new formula is needed, or at once when a formula is
// not on the page.

const OPTIONS = { throwOnError: false, output: "mathml" };
const WAIT_FOR_PAGE_MS = 2000; // for Python's lesson to draw the formulas of the first view
const ACTIVITY = ["keydown", "pointerdown", "pointermove", "touchstart", "focusin", "wheel"];
// a formula drawn: by KaTeX here, or Python's once the assist script has put its MathML in place
const DRAWN = ".lnlab-math[data-tex]:not([data-mathml]), .lnlab-math[data-drawn]";
const BREAK = String.raw`\allowbreak`;
const BREAKS_AFTER = new Set(["=", "+", String.raw`\approx`]);
const OPEN = new Set(["{", String.raw`\left`]);
const CLOSE = new Set(["}", String.raw`\right`]);

/** `tex` cut where a line may break, as lnlab.teach.mathml.pieces cuts it. */
export function pieces(tex) {
  const out = [];
  let piece = [];
  let depth = 0;
  for (const token of tex.match(/\\[a-zA-Z]+|\\.|[^]/g) ?? []) {
    if (token === BREAK && depth === 0) {
      out.push(piece.join(""));
      piece = [];
      continue;
    }
    if (token !== BREAK) piece.push(token);
    depth += OPEN.has(token) - CLOSE.has(token);
    if (depth === 0 && BREAKS_AFTER.has(token)) {
      out.push(piece.join(""));
      piece = [];
    }
  }
  out.push(piece.join(""));
  return out.filter((p) => p.trim());
}

const MINUS = new Set(["-", "\u2212"]);
const CLOSING = new Set([")", "]", "|", "}", "\u2016", "\u27e9"]);

/** `html` with each negative number written as one number, as lnlab.teach.mathml writes
 * Python's: a minus first, or after an operator or an opening bracket, before a number, is
 * its sign, as after a space (KaTeX writes it as an operator, which the browser spaces:
 * "( − 0.2)"). */
function signed(html) {
  const drawn = document.createElement("template");
  drawn.innerHTML = html;
  for (const sign of drawn.content.querySelectorAll("mo")) {
    const after = sign.nextElementSibling;
    const before = sign.previousElementSibling;
    if (!MINUS.has(sign.textContent.trim()) || after?.localName !== "mn") continue;
    const spaced = before?.localName === "mtext" && !before.textContent.trim();
    const operator = before?.localName === "mo" && !CLOSING.has(before.textContent.trim());
    if (before && !spaced && !operator) continue;
    after.textContent = "\u2212" + after.textContent;
    sign.remove();
  }
  return drawn.innerHTML;
}

function escapeAttribute(text) {
  const entities = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" };
  return text.replace(/[&<>"']/g, (c) => entities[c]);
}

export class Formulas {
  /**
   * `load()`: a promise of KaTeX (lnlab.ui.live's loader: once per page). `redraw()`: draw
   * again once formulas that were drawn as their TeX meanwhile can be drawn. `patient()`:
   * whether to wait a while for the page to draw a missing formula (the first view, not shown
   * yet, with Python's formulas) before loading KaTeX. `failed(why)`: KaTeX did not load.
   */
  constructor({ load, redraw, patient, failed }) {
    this.load = load;
    this.redraw = redraw;
    this.patient = patient;
    this.failed = failed;
    this.katex = null;
    this.loading = false;
    this.onPage = new Map(); // TeX -> its MathML as the page drew it
    this.missing = new Set(); // TeX drawn as such until KaTeX or the page has it
    this.watch = null; // watching the page for the missing ones
    this.sent = new Set(); // Python's formulas put on the page (seed)
    this.timer = 0;
    this.onActivity = () => this.need();
    for (const type of ACTIVITY) window.addEventListener(type, this.onActivity, true);
  }

  /** The MathML of `latex` (see above), or its TeX (in `missing`) until KaTeX or the page has
   * it. */
  html(latex) {
    const tex = latex.trim();
    if (this.katex) {
      const whole = this.katex.renderToString(tex.replaceAll(BREAK, ""), OPTIONS);
      const seen = pieces(tex).map((p) => this.katex.renderToString(p, OPTIONS));
      return signed(
        `<span class="lnlab-math" data-tex="${escapeAttribute(tex)}">` +
          `<span class="lnlab-sr-only">${whole}</span>` +
          `<span aria-hidden="true">${seen.join("")}</span></span>`,
      );
    }
    const found = this.onPage.get(tex) ?? this.find(tex);
    if (found !== undefined) return found;
    if (this.complete()) queueMicrotask(() => this.settle()); // once the draw is over
    this.missing.add(tex);
    return `<span class="lnlab-tex">${tex.replace(/[&<>]/g, (c) => `&#${c.charCodeAt(0)};`)}</span>`;
  }

  /** Whether every formula drawn so far is MathML (none waits as its TeX). */
  complete() {
    return this.missing.size === 0;
  }

  /** Put Python's formulas (lnlab.teach.mathml's spans, checked there) into `holder`, a hidden
   * element: the assist script draws their MathML there, and `find` takes it. */
  seed(formulas, holder) {
    const news = (formulas ?? []).filter((html) => !this.sent.has(html));
    for (const html of news) this.sent.add(html);
    if (news.length) holder.insertAdjacentHTML("beforeend", news.join(""));
  }

  /** After a draw that left formulas missing: wait a while for the page to draw them (if
   * `patient()`), else load KaTeX. */
  settle() {
    if (this.complete() || this.watch || this.loading) return;
    const found = () => [...this.missing].every((tex) => this.find(tex) !== undefined);
    if (found()) {
      this.resolved(); // drawn meanwhile
      return;
    }
    if (!this.patient()) {
      this.need();
      return;
    }
    this.watch = new MutationObserver(() => {
      if (found()) this.resolved();
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

  /** The MathML of `tex` as the page drew it, if it did; what the page drew is kept. */
  find(tex) {
    for (const drawn of document.querySelectorAll(DRAWN)) {
      const source = drawn.dataset.tex.trim();
      if (this.onPage.has(source)) continue;
      const copy = drawn.cloneNode(true);
      copy.removeAttribute("data-mathml"); // drawn already: the page's copy of its MathML
      this.onPage.set(source, copy.outerHTML);
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
