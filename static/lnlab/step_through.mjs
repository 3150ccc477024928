// The step-through lesson's five steps, computed and drawn in the page (lnlab.ui.live mounts it).
//
// Python sends the inputs, its own numbers for them and the lesson's words; this module draws
// the steps, their formulas with the token's numbers, the bars and the token's table, and
// answers Previous/Next, the arrow and page keys, the epsilon, gamma and beta sliders and edits
// of a number within the frame (the navigation and the revisions: live_lesson.mjs). While the
// user changes a value, the numbers are computed here (static/lnlab/layer_norm.mjs); at rest the
// page shows Python's own. What changed goes back to Python once the user lets go (a step after a
// pause, a slider on release, a number on leaving its cell), so the link, the exports, the
// questions and the class stay Python's.
import { barsMarkup } from "./bars.mjs";
import { layerNorm } from "./layer_norm.mjs";
import { el, fromJson, LiveLesson, markup, mounter, setText } from "./live_lesson.mjs";
import { fmt, scaleOf } from "./numbers.mjs";
import { tokenSummary, writtenSteps } from "./steps.mjs";

const SEND_VALUE_AFTER_MS = 150; // a slider's release (keyboard presses come in runs)
const FIELDS = ["step", "eps", "gamma", "beta", "x"];
const GAMMA_RANGE = [-3, 3]; // gamma's and beta's sliders, widened to take the value shown
const SLIDER_STEP = 0.05;
const SLIDE_COLUMNS = 8; // a slide's result table shows at most this many features
const NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;

/** epsilon's slider: 0, then 1, 2, 5 times each power of ten from 1e-8 to 1. */
export const EPS_CHOICES = [0];
for (let power = -8; power <= 0; power++) {
  for (const m of power === 0 ? [1] : [1, 2, 5]) EPS_CHOICES.push(Number(`${m}e${power}`));
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

class StepLesson extends LiveLesson {
  constructor(host, loadKatex, send) {
    super(host, loadKatex, send, FIELDS);
    this.editing = null; // the cell being typed in
  }

  // ------------------------------------------------------------------ data from Python

  valuesOf(data) {
    return {
      step: data.step,
      eps: fromJson(data.eps),
      gamma: data.gamma.map(fromJson),
      beta: data.beta.map(fromJson),
      x: data.x.map(fromJson),
    };
  }

  reshaped(local, server) {
    return local.x.length !== server.x.length;
  }

  received(data, reshaped) {
    if (reshaped || !this.cells) this.buildTable();
    this.pythonResult = this.pending() ? null : serverResult(data.result);
  }

  /** Python's numbers while nothing moved since it computed them; ours while something did. */
  result() {
    if (this.pythonResult && !this.pending()) return this.pythonResult;
    const { x, gamma, beta, eps } = this.local;
    return layerNorm(x, gamma, beta, eps);
  }

  // ------------------------------------------------------------------ the lesson's elements

  buildLesson() {
    const id = this.id;
    this.controls.setAttribute("aria-label", "ε, γ and β");
    this.sliders = {
      eps: this.slider("eps", "ε", "ε (epsilon)", 0, EPS_CHOICES.length - 1, 1),
      gamma: this.slider("gamma", "γ", "γ (gamma), for every feature", ...GAMMA_RANGE, SLIDER_STEP),
      beta: this.slider("beta", "β", "β (beta), for every feature", ...GAMMA_RANGE, SLIDER_STEP),
    };
    this.worked = el("div", { class: "lnlab-formula lnlab-live-worked" });
    this.numbers = el("div", { class: "lnlab-live-numbers" });
    this.text.append(this.worked, this.numbers);
    this.bars = el("div"); // the figure: one <svg> per view (live_lesson.mjs, view)
    this.svg.replaceWith(this.bars);
    this.tokenTitle = el("h3", { class: "lnlab-live-token-title", id: `${id}-token`, text: "This token's numbers" });
    this.tokenNote = el("p", {
      class: "lnlab-live-note",
      text: "Type a new x, γ or β in a cell: every step follows as you type, and the page keeps it when you leave the cell.",
    });
    this.tableWrap = el("div", { class: "lnlab-table-wrap" });
    this.message = el("p", { class: "lnlab-live-message", role: "alert" });
    this.token = el("div", { class: "lnlab-live-token" }, this.tokenTitle, this.tokenNote, this.tableWrap, this.message);
    this.after.append(this.token);
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
    input.addEventListener("change", () => this.settled(name, SEND_VALUE_AFTER_MS));
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

  /** Slides have no token table. */
  layout() {
    super.layout();
    this.token.hidden = this.onSlide();
    this.caption.textContent = this.data.texts.caption;
  }

  // ------------------------------------------------------------------ drawing

  draw() {
    const t = this.local;
    const k = t.step;
    const info = this.data.steps[k];
    const r = this.result();
    this.values = { ...r, x: t.x, gamma: t.gamma, beta: t.beta, eps: t.eps };
    const token = `Token ${this.data.token.index + 1}: ${this.data.token.label}`;
    const summary = ` · ${tokenSummary(t.x, t.eps, t.gamma, t.beta)}`;
    if (this.context.textContent !== token + summary) {
      this.context.replaceChildren(el("strong", { text: token }), summary);
    }
    this.setSliders();
    this.stepCallout(info.key, r);
    const worked = writtenSteps(this.values)[k];
    this.formulaView(this.worked, worked);
    this.setNumbers(info, r);
    this.drawFigure();
    this.setTable(r);
  }

  setSliders() {
    const { eps, gamma, beta } = this.local;
    const distance = (i) => Math.abs(EPS_CHOICES[i] - eps);
    const at = EPS_CHOICES.reduce((best, _v, i) => (distance(i) < distance(best) ? i : best), 0);
    const s = this.sliders;
    setSlider(s.eps, { value: String(at) }, fmt(eps), `ε = ${fmt(eps)}`);
    for (const [name, values] of [["gamma", gamma], ["beta", beta]]) {
      const same = values.every((v) => v === values[0]);
      const v = values[0];
      const range = {
        min: String(Math.min(GAMMA_RANGE[0], Math.floor(v))),
        max: String(Math.max(GAMMA_RANGE[1], Math.ceil(v))),
        value: String(v),
      };
      const text = same ? fmt(v) : "one per feature";
      setSlider(s[name], range, text, `${name === "gamma" ? "γ" : "β"} = ${text}`);
    }
  }

  stepCallout(key, r) {
    const texts = this.data.texts;
    let [text, kind] = ["", ""];
    if (["std", "x_hat", "y"].includes(key)) {
      if (r.std === 0) [text, kind] = [texts.undefined, "warning"];
      // every feature equal, as lnlab's TokenLesson.constant: a token of 1e-200s has σ² = 0 too
      else if (this.local.x.every((v) => v === this.local.x[0])) [text, kind] = [texts.constant, "info"];
    }
    this.setCallout(text, kind);
  }

  /** The step's number (a metric) or vector (a one-row table), as a view of `this.numbers`. */
  setNumbers(info, r) {
    const value = { mean: r.mean, var: r.var, std: r.std }[info.key];
    if (value !== undefined) {
      this.view(this.numbers, `${info.metric}=${value}`, () =>
        el(
          "div",
          { class: "lnlab-live-metric" },
          el("p", { class: "lnlab-live-metric-label", text: info.metric }),
          el("p", { class: "lnlab-live-metric-value", title: `Exact value: ${value}`, text: fmt(value) }),
        ),
      );
      return;
    }
    const values = info.key === "x_hat" ? r.xHat : r.y;
    const limit = this.data.presenting ? SLIDE_COLUMNS : values.length;
    this.view(this.numbers, `${info.symbol}=${values.join(",")};${limit}`, () =>
      vectorTable(info.symbol, values, limit),
    );
  }

  /** The bars, as a view of `this.bars` (an <svg> per step, size and values). */
  drawFigure() {
    if (!this.values) return;
    const width = Math.max(240, this.figureWidth || 480);
    const height = this.data.presenting ? 340 : 360;
    const font = this.data.presenting ? 16 : 14;
    const bars = barsMarkup(this.values, this.local.step, this.data.colours, { width, height, font });
    const size = `width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"`;
    const svg = `<svg role="img" aria-labelledby="${this.caption.id}" ${size}>${bars}</svg>`;
    this.view(this.bars, svg, () => markup("div", svg));
  }

  setTable(r) {
    const scale = { xHat: scaleOf(r.xHat), y: scaleOf(r.y) };
    for (const name of ["x", "gamma", "beta"]) {
      this.cells[name].forEach((cell, i) => {
        const value = String(this.local[name][i]);
        if (cell !== this.editing && cell.value !== value) cell.value = value;
      });
    }
    for (const name of ["xHat", "y"]) {
      this.cells[name].forEach((cell, i) => {
        setText(cell, fmt(r[name][i], scale[name]));
        if (cell.title !== String(r[name][i])) cell.title = String(r[name][i]);
      });
    }
  }

  // ------------------------------------------------------------------ what the user does

  slid(name, event) {
    this.mark(event);
    const raw = Number(this.sliders[name].input.value);
    if (name === "eps") this.change("eps", EPS_CHOICES[raw]);
    else this.change(name, this.local[name].map(() => raw));
    this.render();
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
    this.settled(name, 0);
  }

  announcement(name) {
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
    return `${what ? `${what}. ` : ""}${where}: ${result}.`;
  }
}

/** A slider's range and value, its shown text and what a screen reader says, each written only
 * if it changes (the same value written again still costs a style pass). */
function setSlider({ input, output }, range, text, spoken) {
  for (const [name, value] of Object.entries(range)) if (input[name] !== value) input[name] = value;
  setText(output, text);
  if (input.getAttribute("aria-valuetext") !== spoken) input.setAttribute("aria-valuetext", spoken);
}

/** A vector as a one-row table, each number at its own scale; a slide shows `limit` columns. */
function vectorTable(symbol, values, limit) {
  const row = el("tr", {}, el("td", { class: "label", text: symbol }));
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
  return el("div", {}, ...parts);
}

function serverResult(r) {
  return {
    mean: fromJson(r.mean),
    var: fromJson(r.var),
    std: fromJson(r.std),
    xHat: r.xHat.map(fromJson),
    y: r.y.map(fromJson),
  };
}

export const mount = mounter(StepLesson);
