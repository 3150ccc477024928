// What every lesson drawn in the page shares (lnlab.ui.live mounts one): the navigation
// (Previous/Next, the section chooser, "Show every section", the arrow and page keys), the
// section's heading, callout and explanation, the revisions that keep the page and Python in
// step, hiding Python's own lesson once this one draws, the formulas (math.mjs), and the polite
// live region. A lesson (step_through.mjs, padding.mjs) subclasses LiveLesson and draws its own
// numbers.
//
// Every change carries a revision number; Python echoes the last one it applied. A value changed
// here since that echo is kept, so an echo from the server never snaps back a slider being dragged.
//
// What a section shows (its words, formulas, numbers, figure) is drawn once per value and kept in
// the page, laid out but hidden, while another is shown (`view`): going back to a section then
// costs the browser no style or layout work, and a Next paints within the frame it was pressed in.
import { Formulas } from "./math.mjs";

const SEND_STEP_AFTER_MS = 400; // a pause after the last Next or key press
const ANNOUNCE_AFTER_MS = 300;
const EDITABLE = [
  "input",
  "textarea",
  "select",
  "[contenteditable='']",
  "[contenteditable='true']",
  ...["slider", "spinbutton", "listbox", "combobox", "radiogroup", "radio", "grid", "menu"].map(
    (role) => `[role='${role}']`,
  ),
  ".lnlab-table-wrap[tabindex]", // a wide table's scroll region (assist.js): the arrows scroll it
].join(",");
const FALLBACK_STYLE = "lnlab-live-hides-fallback";
const KEPT_VIEWS = 12; // views kept per place: every section's, and a few values more
const KEPT = "lnlab-live-kept"; // a view kept for later: content-visibility hidden, no room taken
let made = 0; // lessons mounted on this page, for unique ids

const lessons = new WeakMap();

/**
 * The `mount` of a lesson class: draw (or update) the lesson in the component's element and
 * return its clean-up. Streamlit calls it again with every new `data`, and may call an older
 * call's clean-up while the element is still on the page (when data changed before that call
 * finished): the lesson is taken down only once its element has left the page.
 */
export function mounter(Lesson) {
  return (component, loadKatex) => {
    const host = component.parentElement;
    let lesson = lessons.get(host);
    if (lesson && !(lesson instanceof Lesson)) {
      lesson.destroy(); // another page's lesson, if Streamlit kept the element across pages
      lesson = undefined;
    }
    if (!lesson) {
      lesson = new Lesson(host, loadKatex, component.setStateValue);
      lessons.set(host, lesson);
    }
    lesson.receive(component.data);
    return lesson.stop;
  };
}

/**
 * What to show when Python's values arrive: each value changed here after the last revision
 * Python applied (`fieldRev[f] > ack`) stays as it is here; the others are Python's. So an echo
 * of an older state never snaps back a slider that is being dragged.
 */
export function merge(local, server, fieldRev, ack) {
  const out = {};
  for (const f of Object.keys(server)) {
    out[f] = local !== null && fieldRev[f] > ack ? local[f] : server[f];
  }
  return out;
}

export function fromJson(v) {
  return typeof v === "string" ? Number(v) : v; // Python sends NaN and ±inf as text
}

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

/** A `tag` element holding `html` (a formula's MathML, say). */
export function markup(tag, html) {
  const e = el(tag);
  e.innerHTML = html;
  return e;
}

/** Set a node's text only if it changes: writing the same text still costs a style and layout pass. */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

export function escapeHtml(text) {
  const entities = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  return text.replace(/[&<>"']/g, (c) => entities[c]);
}

function isEditable(target) {
  return target instanceof Element && target.closest(EDITABLE) !== null;
}

function isMath(part) {
  return part.length > 1 && part.startsWith("$") && part.endsWith("$");
}

/**
 * A lesson's sections 0..n-1 drawn in the page. `fields` are the values kept in step with
 * Python, "step" among them. A subclass gives:
 * - `valuesOf(data)`: Python's values of every field (a field it leaves out is lost);
 * - `reshaped(local, server)`: whether Python's values have another shape (then every value
 *   changed here is dropped for Python's);
 * - `buildLesson()`: its own elements, put into `this.controls`, `this.text`, `this.figure`
 *   and `this.after`; `received(data, reshaped)`: anything to redo when Python's data arrive;
 *   `layout()` (calling this one): what depends on presenter mode;
 * - `draw()`: the numbers of the section `this.local.step` with the values `this.local`, and
 *   `drawFigure()`: the figure at `this.figureWidth` (also on a resize);
 * - `announcement(name)`: the sentence said once the user lets go of `name`.
 */
export class LiveLesson {
  constructor(host, loadKatex, send, fields) {
    this.host = host;
    this.sendState = send;
    this.formulas = new Formulas({
      load: loadKatex,
      redraw: () => this.redraw(),
      // not shown yet, with Python's formulas coming (or its lesson under this one)
      patient: () => this.root.hidden && Boolean(this.data?.formulas?.length || this.data?.fallback),
      failed: (why) => this.sendState("status", `failed: ${why}`),
    });
    this.fields = fields;
    this.id = `lnlab-live-${++made}`;
    this.rev = null; // the last revision made here (Python echoes the last it applied)
    this.sent = 0; // the last revision sent
    this.acked = 0; // the last revision the step route took (Python applies it on its next run)
    this.routeFailed = false; // no lane for this lesson: steps go as state until Python's data
    this.query = ""; // the link's query, to copy: Python's, or the route's answer
    this.queryRev = 0; // the revision it is of
    this.fieldRev = Object.fromEntries(fields.map((f) => [f, 0]));
    this.local = null;
    this.data = null;
    this.readyFor = null; // the server session told that this lesson works
    this.timers = {};
    this.views = new Map(); // place -> (key -> its view, latest last)
    this.shownViews = new Map(); // place -> the view it shows
    this.build();
    this.buildLesson();
    this.onKey = (e) => this.key(e);
    window.addEventListener("keydown", this.onKey, true);
    this.figureWidth = 0; // from the observer: reading it while drawing would force a layout
    this.resize = new ResizeObserver(([entry]) => {
      const width = Math.round(entry.contentRect.width);
      if (width === this.figureWidth) return;
      this.figureWidth = width;
      if (this.data) this.drawFigure();
    });
    this.resize.observe(this.figure);
    this.stop = () => {
      if (!this.host.isConnected) this.destroy(); // still shown: a newer mount() has it
    };
  }

  // ------------------------------------------------------------------ what a lesson gives

  valuesOf(data) {
    return { step: data.step };
  }

  /** Whether Python's values have another shape than the ones shown (a token more or less). */
  reshaped(_local, _server) {
    return false;
  }

  buildLesson() {}

  received(_data, _reshaped) {}

  draw() {}

  drawFigure() {}

  announcement(_name) {
    return "";
  }

  // ------------------------------------------------------------------ data from Python

  receive(data) {
    const server = this.valuesOf(data);
    const fresh = this.data === null || this.data.session !== data.session; // a new server session
    const reshaped = this.local !== null && this.reshaped(this.local, server);
    if (fresh || reshaped) {
      this.rev = Math.max(this.rev ?? 0, data.rev);
      this.sent = fresh ? data.rev : this.sent;
      if (fresh) [this.acked, this.queryRev] = [0, 0];
      for (const f of this.fields) this.fieldRev[f] = 0;
    }
    this.data = data;
    this.formulas.seed(data.formulas, this.seeds);
    this.routeFailed = false; // each run opens the session's lane again (lnlab.ui.server.steps)
    this.pathname = window.location.pathname;
    this.setQuery(data.link, data.rev);
    [this.shareLabel.textContent, this.shareNote.textContent] = data.share ?? ["", ""];
    this.share.hidden = !data.share || Boolean(data.fallback); // Python offers it meanwhile
    this.local = merge(this.local, server, this.fieldRev, data.rev);
    this.received(data, reshaped);
    this.shownStep = null; // draw everything: the words and presenter mode may have changed
    this.layout();
    this.render();
    this.showWhenDrawn();
    this.markSynced();
  }

  /** Show the lesson once its formulas are drawn (math.mjs: the first view waits a while for
   * the page to draw Python's), so that it shows whole, never a formula's TeX. */
  showWhenDrawn() {
    if (this.formulas.complete()) this.show();
  }

  /** Draw every view again: formulas drawn as their TeX meanwhile can now be drawn. */
  redraw() {
    for (const views of this.views.values()) for (const node of views.values()) node.remove();
    this.views.clear();
    this.shownViews.clear();
    this.shownStep = null;
    this.layout();
    this.render();
    this.showWhenDrawn();
  }

  /** Python's link `query` as of revision `rev`: an older one than the route last gave is not
   * taken (a run that began before the step). */
  setQuery(query, rev) {
    if (rev < this.queryRev) return;
    [this.query, this.queryRev] = [query ?? "", rev];
    if (this.share.open) this.showLink();
  }

  /** Whether a value other than the step changed here has not reached Python yet. */
  pending() {
    return this.fields.some((f) => f !== "step" && this.fieldRev[f] > this.data.rev);
  }

  /** data-synced="true" once Python has everything changed here (tests, bench). */
  markSynced() {
    const has = Math.max(this.data.rev, this.acked);
    this.root.dataset.synced = String(this.fields.every((f) => this.fieldRev[f] <= has));
  }

  // ------------------------------------------------------------------ the page's structure

  build() {
    const id = this.id;
    this.root = el("div", { class: "lnlab-live", hidden: "" });
    this.prev = el("button", { type: "button", class: "lnlab-live-button", "data-go": "-1" });
    this.prev.append(el("span", { "aria-hidden": "true", text: "← " }), "Previous");
    this.next = el("button", { type: "button", class: "lnlab-live-button", "data-go": "1" });
    this.next.append("Next", el("span", { "aria-hidden": "true", text: " →" }));
    this.chooser = el("select", { class: "lnlab-live-chooser", "aria-label": "Section" });
    this.allSwitch = el("input", { type: "checkbox", role: "switch", id: `${id}-all` });
    this.allLabel = el("label", { class: "lnlab-live-switch", for: `${id}-all` });
    this.allLabel.append(this.allSwitch, " Show every section");
    this.slideLabel = el("p", { class: "lnlab-live-slide" });
    this.nav = el("div", { class: "lnlab-live-nav", role: "group", "aria-label": "Lesson" });
    this.nav.append(this.prev, this.next, this.chooser, this.allLabel, this.slideLabel);
    this.context = el("p", { class: "lnlab-live-context" });
    this.controls = el("div", { class: "lnlab-live-controls", role: "group" });
    this.heading = el("h2", { id: `${id}-title`, class: "lnlab-live-title" });
    this.callout = el("div", { class: "lnlab-live-callout", role: "note", hidden: "" });
    this.explanation = el("div", { class: "lnlab-live-explanation" });
    this.formula = el("div", { class: "lnlab-formula" });
    this.text = el("div", { class: "lnlab-live-text" }, this.explanation, this.formula);
    this.svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    this.svg.setAttribute("role", "img");
    this.svg.setAttribute("aria-labelledby", `${id}-caption`);
    this.caption = el("figcaption", { id: `${id}-caption` });
    this.figure = el("figure", { class: "lnlab-live-figure" }, this.svg, this.caption);
    this.section = el(
      "section",
      { class: "lnlab-live-section", "aria-labelledby": `${id}-title` },
      this.heading,
      this.callout,
      el("div", { class: "lnlab-live-columns" }, this.text, this.figure),
    );
    this.after = el("div", { class: "lnlab-live-after" });
    this.share = this.buildShare();
    this.live = el("p", { class: "lnlab-sr-only", "aria-live": "polite", role: "status" });
    const parts = [this.nav, this.context, this.controls, this.section, this.after, this.share];
    this.seeds = el("div", { hidden: "" }); // Python's formulas, for `formulas` to take
    this.root.append(...parts, this.live, this.seeds);
    this.host.append(this.root);

    this.nav.addEventListener("click", (e) => {
      const button = e.target.closest("button[data-go]");
      if (button) this.go(Number(button.dataset.go), e);
    });
    this.chooser.addEventListener("change", () => this.goTo(Number(this.chooser.value)));
    this.allSwitch.addEventListener("change", () => {
      if (this.allSwitch.checked) this.flush({ all: true });
    });
  }

  /** "Copy link to this example", as Python offers it on its own lesson's pages: here, since
   * a step changes the link with no script run (the route's answer gives the new one). */
  buildShare() {
    const share = el("details", { class: "lnlab-live-share", hidden: "" });
    this.shareLabel = el("summary");
    this.shareNote = el("p");
    this.shareLink = el("input", { type: "text", readonly: "", "aria-label": "Link" });
    const copy = el("button", { type: "button", class: "lnlab-live-button", text: "Copy" });
    this.shareStatus = el("span", { role: "status" });
    const row = el("div", { class: "lnlab-live-share-row" }, this.shareLink, copy);
    share.append(this.shareLabel, this.shareNote, row, this.shareStatus);
    share.addEventListener("toggle", () => this.showLink());
    share.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || !share.open) return;
      e.stopPropagation();
      share.open = false;
      this.shareLabel.focus();
    });
    copy.addEventListener("click", () => this.copyLink());
    return share;
  }

  /** The link to what is shown: this page's address with Python's last query, or, after a
   * step the route took and no run since, the address the server last sent (a run under way
   * when it took the step sends it again from its own link). */
  showLink() {
    const { origin, pathname, search } = window.location;
    const query = this.acked > this.data.rev && search ? search.slice(1) : this.query;
    this.shareLink.value = `${origin}${pathname}${query ? `?${query}` : ""}`;
    this.shareStatus.textContent = "";
  }

  async copyLink() {
    this.showLink();
    this.shareLink.focus();
    this.shareLink.select();
    let copied = false;
    try {
      await navigator.clipboard.writeText(this.shareLink.value);
      copied = true;
    } catch {
      copied = document.execCommand?.("copy") ?? false; // no clipboard API over plain http
    }
    this.shareStatus.textContent = copied ? "Copied." : "Selected: copy it with Ctrl+C or ⌘C.";
  }

  /** Mode-dependent structure: slides have no chooser or switch, and the link to copy goes on
   * the navigation's line (a slide has no room below the lesson at 1280 x 720). */
  layout() {
    const slide = this.onSlide();
    this.root.classList.toggle("lnlab-live-on-slide", slide);
    if (slide && this.share.parentElement !== this.nav) this.nav.append(this.share); // no room
    if (!slide && this.share.parentElement === this.nav) this.after.after(this.share);
    this.chooser.hidden = slide;
    this.allLabel.hidden = slide;
    this.slideLabel.hidden = !slide;
    const titles = this.data.sections;
    if (this.chooser.options.length !== titles.length) {
      const option = (title, k) => el("option", { value: String(k), text: `${k + 1}. ${title}` });
      this.chooser.replaceChildren(...titles.map(option));
    }
  }

  onSlide() {
    return Boolean(this.data.presenting);
  }

  /** Show the lesson once it can draw. Where Python draws today's lesson under it (this one
   * was slow: lnlab.ui.live), hide that and tell Python, once per server session: each message
   * reruns the page and carries every widget as shown. */
  show() {
    this.root.hidden = false;
    if (!this.data.fallback) return;
    if (!document.getElementById(FALLBACK_STYLE)) {
      const style = el("style", { id: FALLBACK_STYLE });
      style.textContent = `.st-key-${this.data.fallback} { display: none !important; }`;
      document.head.append(style);
    }
    if (this.readyFor === this.data.session) return;
    this.readyFor = this.data.session;
    this.sendState("status", "ready");
  }

  // ------------------------------------------------------------------ drawing

  /** The section's navigation and words (when the section changed), then the lesson's own. */
  render() {
    const k = this.local.step;
    const info = this.data.steps[k];
    const count = this.data.sections.length;
    this.prev.disabled = k === 0;
    this.next.disabled = k === count - 1;
    this.chooser.value = String(k);
    this.allSwitch.checked = false;
    if (this.shownStep !== k) {
      this.shownStep = k;
      this.slideLabel.replaceChildren(el("strong", { text: `Slide ${k + 1} of ${count}` }), ` · ${this.data.title}`);
      this.heading.textContent = `${k + 1}. ${info.title}`;
      this.view(this.explanation, info.explanation, () => markup("p", this.markdown(info.explanation)));
      this.formula.hidden = !info.formula;
      if (info.formula) this.formulaView(this.formula, info.formula);
    }
    this.draw();
  }

  setCallout(text, kind) {
    this.callout.hidden = !text;
    setText(this.callout, text);
    if (this.callout.dataset.kind !== kind) this.callout.dataset.kind = kind;
  }

  /**
   * Show in `place` its view for `key` (`make()` draws it, once) and keep the one it showed
   * before in the page, hidden but laid out (class lnlab-live-kept), so that showing it again
   * costs no style or layout work: stepping back and forth draws nothing again. The oldest view
   * beyond KEPT_VIEWS leaves the page.
   */
  view(place, key, make) {
    const views = this.views.get(place) ?? new Map();
    this.views.set(place, views);
    const shown = this.shownViews.get(place);
    let node = views.get(key);
    if (node && node === shown) return;
    if (node) views.delete(key);
    else place.append((node = make()));
    views.set(key, node);
    for (const [view, kept] of [[shown, true], [node, false]]) {
      view?.classList.toggle(KEPT, kept);
      view?.toggleAttribute("inert", kept); // no focus in it (a table's scroll region)
      // and no screen reader: content-visibility alone left them its text
      if (kept) view?.setAttribute("aria-hidden", "true");
      else view?.removeAttribute("aria-hidden");
    }
    this.shownViews.set(place, node);
    if (views.size > KEPT_VIEWS) {
      const [oldest, old] = views.entries().next().value;
      views.delete(oldest);
      old.remove();
    }
  }

  /** The formula `latex` shown in `place`, drawn once and kept (see view). */
  formulaView(place, latex) {
    this.view(place, latex, () => markup("p", this.math(latex)));
  }

  math(latex) {
    return this.formulas.html(latex);
  }

  /** A section's explanation: text with $...$ math and **bold** (all the Markdown they use). */
  markdown(text) {
    return text
      .split(/(\$[^$]+\$)/)
      .map((part) => (isMath(part) ? this.math(part.slice(1, -1)) : bold(escapeHtml(part))))
      .join("");
  }

  // ------------------------------------------------------------------ what the user does

  /** The arrow and page keys anywhere on the page, unless something there takes them. */
  key(e) {
    if (this.root.hidden || !this.root.isConnected) return;
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    const delta = { ArrowLeft: -1, PageUp: -1, ArrowRight: 1, PageDown: 1 }[e.key];
    if (!delta || isEditable(e.composedPath()[0])) return;
    e.preventDefault();
    e.stopImmediatePropagation(); // Streamlit's own Previous/Next shortcuts must not see it
    this.go(delta, e);
  }

  go(delta, event) {
    this.goTo(this.local.step + delta, event);
  }

  goTo(step, event) {
    const count = this.data.sections.length;
    if (step < 0 || step >= count || step === this.local.step) return;
    this.mark(event);
    this.change("step", step);
    if (step >= this.data.steps.length) {
      this.flush(); // a section Python draws: ask for it now
      this.root.setAttribute("aria-busy", "true");
      return;
    }
    this.render();
    this.later("send", SEND_STEP_AFTER_MS, () => this.flush());
    this.later("announce", ANNOUNCE_AFTER_MS, () => this.announce());
  }

  /** The user let go of `name`: send it after `ms`, and say what it did. */
  settled(name, ms) {
    this.later("send", ms, () => this.flush());
    this.later("announce", ANNOUNCE_AFTER_MS, () => this.announce(name));
  }

  change(field, value) {
    this.rev += 1;
    this.fieldRev[field] = this.rev;
    this.local[field] = value;
    this.markSynced();
  }

  /** Send Python every value changed here that it has not applied yet, with `extra`: a step
   * through the sections drawn here alone by the step route (lnlab.ui.server.steps: no script
   * run), anything else as the component's state (a run). */
  flush(extra = {}, route = true) {
    clearTimeout(this.timers.send);
    const changes = {};
    for (const f of this.fields) if (this.fieldRev[f] > this.data.rev) changes[f] = this.local[f];
    const names = [...Object.keys(changes), ...Object.keys(extra)];
    if (!names.length) return;
    if (this.rev <= this.sent) this.rev += 1; // Python takes each revision once
    this.sent = this.rev;
    const byRoute = route && this.data.route && !this.routeFailed && names.length === 1;
    const here = window.location.pathname === this.pathname; // not another page's by now
    if (byRoute && here && names[0] === "step" && changes.step < this.data.steps.length) {
      this.postStep(this.rev, changes.step);
      return;
    }
    this.sendState("lesson", { rev: this.rev, ...changes, ...extra });
  }

  /** Post a step to the route; where it does not take this one, send it as state. Where
   * there is no lane for it (404, 405), the route is not asked again until Python's next data. */
  async postStep(rev, step) {
    const session = this.data.session;
    let answer = null;
    try {
      const response = await fetch(this.data.route, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ rev, step }),
        cache: "no-store",
        credentials: "same-origin",
      });
      answer = { status: response.status, body: await response.json().catch(() => null) };
    } catch {
      // unreachable: as state, below
    }
    if (!this.host.isConnected || this.data.session !== session) return; // moved on meanwhile
    if (answer?.status === 200 && answer.body?.rev === rev) {
      this.acked = Math.max(this.acked, rev);
      this.setQuery(answer.body.query, rev);
      this.markSynced();
      return;
    }
    if (answer?.status === 404 || answer?.status === 405) this.routeFailed = true;
    this.flush({}, false);
  }

  later(name, ms, work) {
    clearTimeout(this.timers[name]);
    this.timers[name] = setTimeout(work, ms);
  }

  /** One polite sentence once the user lets go: never one per frame of a drag. */
  announce(name) {
    this.live.textContent = this.announcement(name);
  }

  /** Performance marks for bench/live.py: the input, then the frame that shows its answer. */
  mark(event) {
    const start = event?.timeStamp ?? performance.now();
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        performance.measure("lnlab:input-to-frame", { start, end: performance.now() });
        if (performance.getEntriesByName("lnlab:input-to-frame").length > 1000) {
          performance.clearMeasures("lnlab:input-to-frame");
        }
      };
      channel.port2.postMessage(null);
    });
  }

  destroy() {
    window.removeEventListener("keydown", this.onKey, true);
    this.resize.disconnect();
    this.formulas.stop();
    for (const timer of Object.values(this.timers)) clearTimeout(timer);
    document.getElementById(FALLBACK_STYLE)?.remove();
    lessons.delete(this.host);
    this.root.remove();
  }
}

function bold(html) {
  return html.replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
}
