// The step-through lesson's five steps, computed and drawn in the page (lnlab.ui.live mounts it).
//
// Python sends the inputs, its own numbers for them and the lesson's words; this module draws
// the steps, their formulas with the token's numbers, the bars and the token's table, and
// answers Previous/Next, the arrow and page keys, the epsilon, gamma and beta sliders and edits
// of a number within the frame. While the user changes a value, the numbers are computed here
// (static/lnlab/layer_norm.mjs); at rest the page shows Python's own. What changed goes back to
// Python once the user lets go (a step after a pause, a slider on release, a number on leaving
// its cell), so the link, the exports, the questions and the class stay Python's.
//
// Every change carries a revision number; Python echoes the last one it applied. A value changed
// here since that echo is kept, so an echo from the server never snaps back a slider being dragged.
import { barsMarkup } from "./bars.mjs";
import { layerNorm } from "./layer_norm.mjs";
import { fmt, scaleOf } from "./numbers.mjs";
import { tokenSummary, writtenSteps } from "./steps.mjs";

const SEND_STEP_AFTER_MS = 400; // a pause after the last Next or key press
const SEND_VALUE_AFTER_MS = 150; // a slider's release (keyboard presses come in runs)
const ANNOUNCE_AFTER_MS = 300;
const FIELDS = ["step", "eps", "gamma", "beta", "x"];
const GAMMA_RANGE = [-3, 3]; // gamma's and beta's sliders, widened to take the value shown
const SLIDER_STEP = 0.05;
const SLIDE_COLUMNS = 8; // a slide's result table shows at most this many features
const EDITABLE = [
  "input",
  "textarea",
  "select",
  "[contenteditable='']",
  "[contenteditable='true']",
  ...["slider", "spinbutton", "listbox", "combobox", "radiogroup", "radio", "grid", "menu"].map(
    (role) => `[role='${role}']`,
  ),
].join(",");
const NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const FALLBACK_STYLE = "lnlab-live-hides-fallback";
const KEPT_FORMULAS = 64; // drawn formulas kept, so stepping back and forth draws none again
let made = 0; // lessons mounted on this page, for unique ids

/** epsilon's slider: 0, then 1, 2, 5 times each power of ten from 1e-8 to 1. */
export const EPS_CHOICES = [0];
for (let power = -8; power <= 0; power++) {
  for (const m of power === 0 ? [1] : [1, 2, 5]) EPS_CHOICES.push(Number(`${m}e${power}`));
}

const lessons = new WeakMap();

/**
 * Draw (or update) the lesson in the component's element; returns its clean-up. Streamlit
 * calls this again with every new `data`, and may call an older call's clean-up while the
 * element is still on the page (when data changed before that call finished): the lesson is
 * taken down only once its element has left the page.
 */
export function mount(component, katex) {
  const host = component.parentElement;
  let lesson = lessons.get(host);
  if (!lesson) {
    lesson = new StepLesson(host, katex, component.setStateValue);
    lessons.set(host, lesson);
  }
  lesson.receive(component.data);
  return lesson.stop;
}

/**
 * What to show when Python's values arrive: each value changed here after the last revision
 * Python applied (`fieldRev[f] > ack`) stays as it is here; the others are Python's. So an echo
 * of an older state never snaps back a slider that is being dragged.
 */
export function merge(local, server, fieldRev, ack) {
  const out = {};
  for (const f of FIELDS) out[f] = local !== null && fieldRev[f] > ack ? local[f] : server[f];
  return out;
}

/** The number typed in a cell, or an error message (lnlab.core.parse's rules for one number). */
export function parseNumber(text) {
  const clean = text.trim().replace(/\u2212/g, "-");
  if (!NUMBER.test(clean)) return { error: `"${text.slice(0, 20)}" is not a number` };
  const value = Number(clean);
  if (!Number.isFinite(value)) return { error: `${clean} is too large for a float64` };
  if (value === 0 && /[1-9]/.test(clean.split(/[eE]/)[0])) {
    return { error: `${clean} is too small to tell from 0` };
  }
  return { value };
}

function fromJson(v) {
  return typeof v === "string" ? Number(v) : v; // Python sends NaN and ±inf as text
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  e.append(...children);
  return e;
}

function isEditable(target) {
  return target instanceof Element && target.closest(EDITABLE) !== null;
}

class StepLesson {
  constructor(host, katex, send) {
    this.host = host;
    this.katex = katex;
    this.sendState = send;
    this.id = `lnlab-live-${++made}`;
    this.rev = null; // the last revision made here (Python echoes the last it applied)
    this.sent = 0; // the last revision sent
    this.fieldRev = Object.fromEntries(FIELDS.map((f) => [f, 0]));
    this.local = null; // step, eps, gamma, beta, x as shown
    this.data = null;
    this.timers = {};
    this.formulas = new Map(); // LaTeX (or a step's words) -> its drawn element, latest last
    this.editing = null; // the cell being typed in
    this.build();
    this.onKey = (e) => this.key(e);
    window.addEventListener("keydown", this.onKey, true);
    this.figureWidth = 0; // from the observer: reading it while drawing would force a layout
    this.resize = new ResizeObserver(([entry]) => {
      const width = Math.round(entry.contentRect.width);
      if (width === this.figureWidth) return;
      this.figureWidth = width;
      this.drawBars();
    });
    this.resize.observe(this.figure);
    this.stop = () => this.cleanUp();
  }

  // ------------------------------------------------------------------ data from Python

  receive(data) {
    const server = {
      step: data.step,
      eps: fromJson(data.eps),
      gamma: data.gamma.map(fromJson),
      beta: data.beta.map(fromJson),
      x: data.x.map(fromJson),
    };
    const fresh = this.data === null || this.data.session !== data.session; // a new server session
    const reshaped = this.local !== null && this.local.x.length !== server.x.length;
    if (fresh || reshaped) {
      this.rev = Math.max(this.rev ?? 0, data.rev);
      this.sent = fresh ? data.rev : this.sent;
      for (const f of FIELDS) this.fieldRev[f] = 0;
    }
    this.data = data;
    this.local = merge(this.local, server, this.fieldRev, data.rev);
    if (reshaped) this.buildTable();
    this.shownStep = null; // draw everything: the words and presenter mode may have changed
    this.pythonResult = this.pending() ? null : this.serverResult(data.result);
    this.layout();
    this.render();
    this.show();
    this.markSynced();
  }

  serverResult(r) {
    return {
      mean: fromJson(r.mean),
      var: fromJson(r.var),
      std: fromJson(r.std),
      xHat: r.xHat.map(fromJson),
      y: r.y.map(fromJson),
    };
  }

  /** Whether a value changed here has not reached Python yet. */
  pending() {
    return ["eps", "gamma", "beta", "x"].some((f) => this.fieldRev[f] > this.data.rev);
  }

  /** data-synced="true" once Python has applied everything changed here (tests, bench). */
  markSynced() {
    this.root.dataset.synced = String(FIELDS.every((f) => this.fieldRev[f] <= this.data.rev));
  }

  /** Python's numbers while nothing moved since it computed them; ours while something did. */
  result() {
    if (this.pythonResult && !this.pending()) return this.pythonResult;
    const { x, gamma, beta, eps } = this.local;
    return layerNorm(x, gamma, beta, eps);
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
    this.controls = el("div", { class: "lnlab-live-controls", role: "group", "aria-label": "ε, γ and β" });
    this.sliders = {
      eps: this.slider("eps", "ε", "ε (epsilon)", 0, EPS_CHOICES.length - 1, 1),
      gamma: this.slider("gamma", "γ", "γ (gamma), for every feature", ...GAMMA_RANGE, SLIDER_STEP),
      beta: this.slider("beta", "β", "β (beta), for every feature", ...GAMMA_RANGE, SLIDER_STEP),
    };
    this.heading = el("h2", { id: `${id}-title`, class: "lnlab-live-title" });
    this.callout = el("div", { class: "lnlab-live-callout", role: "note", hidden: "" });
    this.explanation = el("p", { class: "lnlab-live-explanation" });
    this.formula = el("p");
    this.worked = el("p");
    this.numbers = el("div", { class: "lnlab-live-numbers" });
    const text = el(
      "div",
      { class: "lnlab-live-text" },
      this.explanation,
      el("div", { class: "lnlab-formula" }, this.formula),
      el("div", { class: "lnlab-formula" }, this.worked),
      this.numbers,
    );
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
      el("div", { class: "lnlab-live-columns" }, text, this.figure),
    );
    this.tokenTitle = el("h3", { class: "lnlab-live-token-title", id: `${id}-token`, text: "This token's numbers" });
    this.tokenNote = el("p", {
      class: "lnlab-live-note",
      text: "Type a new x, γ or β in a cell: every step follows as you type, and the page keeps it when you leave the cell.",
    });
    this.tableWrap = el("div", { class: "lnlab-table-wrap" });
    this.message = el("p", { class: "lnlab-live-message", role: "alert" });
    this.token = el("div", { class: "lnlab-live-token" }, this.tokenTitle, this.tokenNote, this.tableWrap, this.message);
    this.live = el("p", { class: "lnlab-sr-only", "aria-live": "polite", role: "status" });
    this.root.append(this.nav, this.context, this.controls, this.section, this.token, this.live);
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

  slider(name, symbol, label, min, max, step) {
    const input = el("input", {
      type: "range",
      id: `${this.id}-${name}`,
      "aria-label": label,
      min: String(min),
      max: String(max),
      step: String(step),
    });
    const output = el("output", { for: input.id, "aria-hidden": "true" });
    const box = el(
      "div",
      { class: "lnlab-live-slider" },
      el("label", { for: input.id, text: symbol, title: label }),
      input,
      output,
    );
    this.controls.append(box);
    input.addEventListener("input", (e) => this.slid(name, e));
    input.addEventListener("change", () => this.released(name));
    return { input, output };
  }

  /** The token's table: x, gamma and beta as cells to type in, then x_hat and y. */
  buildTable() {
    const d = this.local.x.length;
    const table = el("table", { class: "lnlab-table lnlab-live-table", "aria-labelledby": `${this.id}-token` });
    const head = el("tr", {}, el("th", { scope: "col", text: "vector" }));
    for (let i = 0; i < d; i++) head.append(el("th", { scope: "col", text: `f${i + 1}` }));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    this.cells = {};
    for (const [name, symbol, editable] of [
      ["x", "x", true],
      ["gamma", "γ", true],
      ["beta", "β", true],
      ["xHat", "x̂", false],
      ["y", "y", false],
    ]) {
      const row = el("tr", {}, el("th", { scope: "row", class: "label", text: symbol }));
      this.cells[name] = [];
      for (let i = 0; i < d; i++) {
        const cell = editable
          ? el("input", { type: "text", inputmode: "decimal", "aria-label": `${symbol}, f${i + 1}`, size: "6" })
          : el("span");
        if (editable) {
          cell.addEventListener("input", () => this.typed(name, i, cell));
          cell.addEventListener("change", () => this.committed(name, i, cell));
          cell.addEventListener("keydown", (e) => {
            if (e.key === "Enter") cell.blur();
          });
        }
        this.cells[name].push(cell);
        row.append(el("td", {}, cell));
      }
      body.append(row);
    }
    table.append(body);
    this.tableWrap.replaceChildren(table);
  }

  /** Mode-dependent structure: slides have no chooser, switch or token table. */
  layout() {
    const slide = Boolean(this.data.presenting);
    this.root.classList.toggle("lnlab-live-on-slide", slide);
    this.chooser.hidden = slide;
    this.allLabel.hidden = slide;
    this.slideLabel.hidden = !slide;
    this.token.hidden = slide;
    if (!this.cells) this.buildTable();
    const titles = this.data.sections;
    if (this.chooser.options.length !== titles.length) {
      const option = (title, k) => el("option", { value: String(k), text: `${k + 1}. ${title}` });
      this.chooser.replaceChildren(...titles.map(option));
    }
    this.caption.textContent = this.data.texts.caption;
  }

  /** Show the lesson once it can draw. While Python still draws today's lesson under it
   * (it has not heard that this one works in this session), hide that and tell Python. */
  show() {
    this.root.hidden = false;
    if (!this.data.fallback) return;
    if (!document.getElementById(FALLBACK_STYLE)) {
      const style = el("style", { id: FALLBACK_STYLE });
      style.textContent = `.st-key-${this.data.fallback} { display: none !important; }`;
      document.head.append(style);
    }
    this.sendState("status", "ready");
  }

  // ------------------------------------------------------------------ drawing

  render() {
    const t = this.local;
    const k = t.step;
    const info = this.data.steps[k];
    const r = this.result();
    this.values = { ...r, x: t.x, gamma: t.gamma, beta: t.beta, eps: t.eps };
    const count = this.data.sections.length;
    this.prev.disabled = k === 0;
    this.next.disabled = k === count - 1;
    this.chooser.value = String(k);
    this.allSwitch.checked = false;
    if (this.shownStep !== k) {
      // what a step changes; a value alone changes only what follows
      this.shownStep = k;
      this.slideLabel.replaceChildren(el("strong", { text: `Slide ${k + 1} of ${count}` }), ` · ${this.data.title}`);
      this.heading.textContent = `${k + 1}. ${info.title}`;
      this.explanation.replaceChildren(this.drawn(`text:${info.explanation}`, () => this.markdown(info.explanation)));
      this.formula.replaceChildren(this.drawn(info.formula, () => this.math(info.formula)));
    }
    this.context.replaceChildren(
      el("strong", { text: `Token ${this.data.token.index + 1}: ${this.data.token.label}` }),
      ` · ${tokenSummary(t.x, t.eps, t.gamma, t.beta)}`,
    );
    this.setSliders();
    this.setCallout(info.key, r);
    const worked = writtenSteps(this.values)[k];
    if (worked !== this.lastWorked) {
      this.worked.replaceChildren(this.drawn(worked, () => this.math(worked)));
      this.lastWorked = worked;
    }
    this.setNumbers(info, r);
    this.drawBars();
    this.setTable(r);
  }

  setSliders() {
    const { eps, gamma, beta } = this.local;
    const distance = (i) => Math.abs(EPS_CHOICES[i] - eps);
    const at = EPS_CHOICES.reduce((best, _v, i) => (distance(i) < distance(best) ? i : best), 0);
    const s = this.sliders;
    s.eps.input.value = String(at);
    s.eps.output.textContent = fmt(eps);
    s.eps.input.setAttribute("aria-valuetext", `ε = ${fmt(eps)}`);
    for (const [name, values] of [["gamma", gamma], ["beta", beta]]) {
      const { input, output } = s[name];
      const same = values.every((v) => v === values[0]);
      const v = values[0];
      input.min = String(Math.min(GAMMA_RANGE[0], Math.floor(v)));
      input.max = String(Math.max(GAMMA_RANGE[1], Math.ceil(v)));
      input.value = String(v);
      const text = same ? fmt(v) : "one per feature";
      output.textContent = text;
      input.setAttribute("aria-valuetext", `${name === "gamma" ? "γ" : "β"} = ${text}`);
    }
  }

  setCallout(key, r) {
    const texts = this.data.texts;
    let text = "";
    let kind = "";
    if (["std", "x_hat", "y"].includes(key)) {
      if (r.std === 0) [text, kind] = [texts.undefined, "warning"];
      else if (r.var === 0) [text, kind] = [texts.constant, "info"];
    }
    this.callout.hidden = !text;
    this.callout.textContent = text;
    this.callout.dataset.kind = kind;
  }

  setNumbers(info, r) {
    const value = { mean: r.mean, var: r.var, std: r.std }[info.key];
    if (value !== undefined) {
      const shown = fmt(value);
      const metric = el(
        "div",
        { class: "lnlab-live-metric" },
        el("p", { class: "lnlab-live-metric-label", text: info.metric }),
        el("p", { class: "lnlab-live-metric-value", title: `Exact value: ${value}`, text: shown }),
      );
      this.numbers.replaceChildren(metric);
      return;
    }
    const values = info.key === "x_hat" ? r.xHat : r.y;
    const limit = this.data.presenting ? SLIDE_COLUMNS : values.length;
    const row = el("tr", {}, el("td", { class: "label", text: info.symbol }));
    const head = el("tr", {}, el("th", { scope: "col", text: "vector" }));
    for (let i = 0; i < Math.min(limit, values.length); i++) {
      const v = values[i];
      head.append(el("th", { scope: "col", text: `f${i + 1}` }));
      row.append(el("td", { title: String(v), text: fmt(v, scaleOf([v])) }));
    }
    const table = el("table", { class: "lnlab-table" }, el("thead", {}, head), el("tbody", {}, row));
    const parts = [el("div", { class: "lnlab-table-wrap" }, table)];
    if (values.length > limit) {
      parts.push(el("p", { class: "lnlab-live-note", text: `${values.length - limit} more columns off this slide.` }));
    }
    this.numbers.replaceChildren(...parts);
  }

  drawBars() {
    if (!this.values) return;
    const width = Math.max(240, this.figureWidth || 480);
    const height = this.data.presenting ? 340 : 360;
    const font = this.data.presenting ? 16 : 14;
    this.svg.setAttribute("width", String(width));
    this.svg.setAttribute("height", String(height));
    this.svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    this.svg.innerHTML = barsMarkup(this.values, this.local.step, this.data.colours, { width, height, font });
  }

  setTable(r) {
    const scale = { xHat: scaleOf(r.xHat), y: scaleOf(r.y) };
    for (const name of ["x", "gamma", "beta"]) {
      this.cells[name].forEach((cell, i) => {
        if (cell !== this.editing) cell.value = String(this.local[name][i]);
      });
    }
    for (const name of ["xHat", "y"]) {
      this.cells[name].forEach((cell, i) => {
        cell.textContent = fmt(r[name][i], scale[name]);
        cell.title = String(r[name][i]);
      });
    }
  }

  /** The element drawn for `key` (KaTeX markup from `make()`), drawn once and kept. */
  drawn(key, make) {
    let node = this.formulas.get(key);
    if (node) {
      this.formulas.delete(key);
    } else {
      node = el("span");
      node.innerHTML = make();
    }
    this.formulas.set(key, node);
    if (this.formulas.size > KEPT_FORMULAS) this.formulas.delete(this.formulas.keys().next().value);
    return node;
  }

  math(latex) {
    return this.katex.renderToString(latex, { throwOnError: false, output: "htmlAndMathml" });
  }

  /** A step's explanation: text with $...$ math (all the Markdown the steps use). */
  markdown(text) {
    return text
      .split(/(\$[^$]+\$)/)
      .map((part) => (isMath(part) ? this.math(part.slice(1, -1)) : escapeHtml(part)))
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

  slid(name, event) {
    this.mark(event);
    const raw = Number(this.sliders[name].input.value);
    if (name === "eps") this.change("eps", EPS_CHOICES[raw]);
    else this.change(name, this.local[name].map(() => raw));
    this.render();
  }

  released(name) {
    this.later("send", SEND_VALUE_AFTER_MS, () => this.flush());
    this.later("announce", ANNOUNCE_AFTER_MS, () => this.announce(name));
  }

  typed(name, i, cell) {
    this.editing = cell;
    const parsed = parseNumber(cell.value);
    const symbol = { x: "x", gamma: "γ", beta: "β" }[name];
    if (parsed.error) {
      cell.setAttribute("aria-invalid", "true");
      const kept = fmt(this.local[name][i], scaleOf(this.local[name]));
      this.message.textContent = `${symbol}, f${i + 1}: ${parsed.error}. The steps keep ${kept}.`;
      return;
    }
    cell.removeAttribute("aria-invalid");
    this.message.textContent = "";
    this.mark();
    const values = this.local[name].slice();
    values[i] = parsed.value;
    this.change(name, values);
    this.render();
  }

  committed(name, i, cell) {
    this.editing = null;
    if (cell.getAttribute("aria-invalid") === "true") {
      cell.value = String(this.local[name][i]);
      cell.removeAttribute("aria-invalid");
      return;
    }
    this.later("send", 0, () => this.flush());
    this.later("announce", ANNOUNCE_AFTER_MS, () => this.announce(name));
  }

  change(field, value) {
    this.rev += 1;
    this.fieldRev[field] = this.rev;
    this.local[field] = value;
    this.markSynced();
  }

  /** Send Python every value changed here that it has not applied yet, with `extra`. */
  flush(extra = {}) {
    clearTimeout(this.timers.send);
    const changes = {};
    for (const f of FIELDS) if (this.fieldRev[f] > this.data.rev) changes[f] = this.local[f];
    if (!Object.keys(changes).length && !Object.keys(extra).length) return;
    if (this.rev <= this.sent) this.rev += 1; // Python takes each revision once
    this.sent = this.rev;
    this.sendState("lesson", { rev: this.rev, ...changes, ...extra });
  }

  later(name, ms, work) {
    clearTimeout(this.timers[name]);
    this.timers[name] = setTimeout(work, ms);
  }

  /** One polite sentence once the user lets go: never one per frame of a drag. */
  announce(name) {
    const k = this.local.step;
    const info = this.data.steps[k];
    const r = this.result();
    const value = { mean: r.mean, var: r.var, std: r.std }[info.key];
    const vector = r[info.key === "x_hat" ? "xHat" : "y"];
    const shown = value !== undefined ? fmt(value) : `(${Array.from(vector.slice(0, 8), (v) => fmt(v)).join(", ")})`;
    const result = `${info.symbol} = ${shown}`;
    const what = {
      eps: `ε = ${fmt(this.local.eps)}`,
      gamma: `γ = ${this.sliders.gamma.output.textContent}`,
      beta: `β = ${this.sliders.beta.output.textContent}`,
      x: "x changed",
    }[name];
    const where = `Step ${k + 1} of ${this.data.steps.length}, ${info.title}`;
    this.live.textContent = `${what ? `${what}. ` : ""}${where}: ${result}.`;
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

  cleanUp() {
    if (this.host.isConnected) return; // still shown: a newer call of mount() has it
    window.removeEventListener("keydown", this.onKey, true);
    this.resize.disconnect();
    for (const timer of Object.values(this.timers)) clearTimeout(timer);
    document.getElementById(FALLBACK_STYLE)?.remove();
    lessons.delete(this.host);
    this.root.remove();
  }
}

function escapeHtml(text) {
  const entities = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  return text.replace(/[&<>"']/g, (c) => entities[c]);
}

function isMath(part) {
  return part.length > 1 && part.startsWith("$") && part.endsWith("$");
}
