// The padding lesson's first two sections drawn in the page (lnlab.ui.live mounts it, with
// lnlab.labs.padding.live's data): the padded batch, and which of its cells feed a statistic.
//
// Picking a statistic (a Batch Norm column with the PAD rows or without them, or a Layer Norm
// row; from the lists, or by clicking a cell of the batch) is answered here within the frame:
// the picked cells are outlined and the mean and the variance are written out with their
// numbers. The numbers are Python's (every statistic one
// can pick comes with the data); this module picks, outlines and writes the formulas as
// lnlab.labs.padding.lesson.statistic_latex does. The pick goes back to Python once made, so the
// link and the rest of the lesson follow it. Navigation and revisions: live_lesson.mjs.
import { joined, num, term } from "./latex.mjs";
import { el, LiveLesson, mounter } from "./live_lesson.mjs";
import { fmt } from "./numbers.mjs";

const FIELDS = ["step", "pick", "token", "feature"];
const CELLS = 1; // the section whose statistic the user picks
const SEND_PICK_AFTER_MS = 150; // picks made with the arrow keys come in runs
const TOKEN = "token";
const LABEL_CHARS = 22; // a row's label longer than this is cut on the figure (whole in its title)
const SVG = "http://www.w3.org/2000/svg";

/** The cells of the picked statistic, in the order lnlab.labs.padding.batch.highlight_mask
 * takes them: a token's row, a feature's column, or that column's real (not PAD) rows. */
export function pickedCells(rows, pick, index) {
  const at = [];
  rows.forEach((row, i) => {
    if (pick === TOKEN) {
      if (i === index) row.values.forEach((_v, j) => at.push([i, j]));
    } else if (pick === "naive" || !row.pad) {
      at.push([i, index]);
    }
  });
  return at;
}

/** The picked statistic's mean written out, its variance in short and written out, as
 * lnlab.labs.padding.lesson.statistic_latex writes them. */
export function statisticLatex(values, symbol, mean, variance) {
  const n = values.length;
  const m = term(mean);
  const sub = `_{${symbol}}`;
  return [
    String.raw`\mu${sub} = \tfrac{1}{${n}}\big(${joined(values.map((v) => term(v)))}\big) = ${num(mean)}`,
    String.raw`\sigma^2${sub} = \tfrac{1}{${n}}\textstyle\sum (x - ${m})^2 = ${num(variance)}`,
    String.raw`\sigma^2${sub} = \tfrac{1}{${n}}\big(` +
      joined(values.map((v) => `(${term(v)} - ${m})^2`)) +
      String.raw`\big) = ${num(variance)}`,
  ];
}

/** The symbol of a statistic in its formulas: "\text{token 3}" or "\text{f2}". */
export function statisticSymbol(pick, index, features) {
  return pick === TOKEN ? String.raw`\text{token ${index + 1}}` : String.raw`\text{${features[index]}}`;
}

class PaddingLesson extends LiveLesson {
  constructor(host, loadKatex, send) {
    super(host, loadKatex, send, FIELDS);
  }

  valuesOf(data) {
    return { step: data.step, pick: data.pick, token: data.token, feature: data.feature };
  }

  received(data) {
    this.rows = data.rows.map((row, i) => ({ ...row, values: data.values[i], cells: data.cells[i] }));
    if (this.local.token >= this.rows.length) this.local.token = 0;
    this.buildPicks();
    this.buildNumbersTable();
  }

  // ------------------------------------------------------------------ the lesson's elements

  buildLesson() {
    const id = this.id;
    this.controls.setAttribute("aria-label", "The statistic");
    this.pick = el("select", { id: `${id}-pick`, class: "lnlab-live-chooser lnlab-live-pick" });
    this.indexLabel = el("label", { for: `${id}-index` });
    this.index = el("select", { id: `${id}-index`, class: "lnlab-live-chooser" });
    this.controls.append(
      el("div", { class: "lnlab-live-index" }, el("label", { for: this.pick.id, text: "Statistic" }), this.pick),
      el("div", { class: "lnlab-live-index" }, this.indexLabel, this.index),
    );
    this.pick.addEventListener("change", (e) => {
      const pick = this.pick.value;
      this.picked(pick, pick === TOKEN ? this.local.token : this.local.feature, e);
    });
    this.index.addEventListener("change", (e) => this.picked(this.local.pick, Number(this.index.value), e));
    this.mean = el("div");
    this.variance = el("div");
    this.writtenOut = el("div");
    this.detail = el("details", { class: "lnlab-live-detail" }, el("summary"), el("div", { class: "lnlab-formula" }, this.writtenOut));
    this.statBox = el(
      "div",
      { class: "lnlab-live-statistic" },
      el("div", { class: "lnlab-formula" }, this.mean),
      el("div", { class: "lnlab-formula" }, this.variance),
      this.detail,
    );
    this.text.append(this.statBox);
    this.svg.removeAttribute("aria-labelledby");
    this.svg.addEventListener("click", (e) => {
      const cell = e.target.closest("[data-row]");
      if (!cell || this.local.step !== CELLS) return;
      const [i, j] = [Number(cell.dataset.row), Number(cell.dataset.col)];
      this.picked(this.local.pick, this.local.pick === TOKEN ? i : j, e);
    });
    this.tableWrap = el("div", { class: "lnlab-table-wrap", role: "region" }); // focusable when it scrolls (assist.js)
    this.tableDetail = el("details", { class: "lnlab-live-detail" }, el("summary"), this.tableWrap);
    this.figure.append(this.tableDetail);
  }

  /** The statistics to pick from, once per page. */
  buildPicks() {
    if (this.pick.options.length) return;
    this.pick.append(...this.data.picks.map(({ key, label }) => el("option", { value: key, text: label })));
  }

  /** The batch's numbers as a table: a screen reader's way through the figure. */
  buildNumbersTable() {
    const texts = this.data.texts;
    this.tableDetail.firstChild.textContent = texts.table;
    this.tableWrap.setAttribute("aria-label", texts.batch.label);
    const head = el("tr", {}, el("th", { scope: "col", text: "token" }));
    for (const f of this.data.features) head.append(el("th", { scope: "col", text: f }));
    const body = el("tbody");
    for (const row of this.rows) {
      const tr = el("tr", {}, el("th", { scope: "row", class: "label", text: row.label }));
      for (const cell of row.cells) tr.append(el("td", { class: row.pad ? "pad" : "", text: cell.text }));
      body.append(tr);
    }
    this.tableWrap.replaceChildren(el("table", { class: "lnlab-table" }, el("thead", {}, head), body));
  }

  layout() {
    super.layout();
    this.context.innerHTML = this.markdown(this.data.context);
    this.detail.firstChild.textContent = this.data.texts.detail;
  }

  // ------------------------------------------------------------------ drawing

  /** The statistic picked now: its key, index, cells, numbers and words. */
  statistic() {
    const { pick } = this.local;
    const index = pick === TOKEN ? this.local.token : this.local.feature;
    const stats = this.data.stats[pick][index];
    const cells = pickedCells(this.rows, pick, index);
    const template = this.data.texts.picked[pick];
    const words = template.replace("{token}", String(index + 1)).replace("{feature}", this.data.features[index]);
    return { pick, index, cells, ...stats, words };
  }

  draw() {
    const onCells = this.local.step === CELLS;
    this.controls.hidden = !onCells;
    this.statBox.hidden = !onCells;
    const s = this.statistic();
    this.outlined = onCells ? s.cells : [];
    if (onCells) {
      this.setPicks(s);
      const values = s.cells.map(([i, j]) => this.rows[i].values[j]);
      const [mean, short, long] = statisticLatex(values, statisticSymbol(s.pick, s.index, this.data.features), s.mean, s.var);
      this.formulaView(this.mean, mean);
      this.formulaView(this.variance, short);
      this.formulaView(this.writtenOut, long);
    }
    const words = onCells ? this.data.texts.cells : this.data.texts.batch;
    const fill = (text) =>
      text
        .replace("{count}", String(s.cells.length))
        .replace("{picked}", s.words)
        .replace("{mean}", fmt(s.mean))
        .replace("{var}", fmt(s.var));
    this.caption.textContent = fill(words.caption);
    this.svg.setAttribute("aria-label", `${words.label}. ${fill(words.summary)}`);
    this.drawFigure();
  }

  setPicks(s) {
    this.pick.value = s.pick;
    const token = s.pick === TOKEN;
    this.indexLabel.textContent = token ? "Token row" : "Feature column";
    const names = token ? this.rows.map((r) => r.label) : this.data.features;
    const listed = names.join("\n"); // a word edited keeps the count: compare the names
    if (this.index.dataset.names !== listed) {
      this.index.dataset.names = listed;
      this.index.replaceChildren(...names.map((name, k) => el("option", { value: String(k), text: name })));
    }
    this.index.value = String(s.index);
  }

  /** The batch as a heatmap: Python's colours and numbers, the picked cells outlined. */
  drawFigure() {
    if (!this.rows) return;
    const slide = this.onSlide();
    const font = slide ? 16 : 14;
    const rowHeight = slide ? 24 : 26;
    const top = font + 18;
    const width = Math.max(240, this.figureWidth || 480);
    const longest = Math.max(...this.rows.map((r) => Math.min(r.label.length, LABEL_CHARS)));
    const labelWidth = Math.min(width * 0.45, longest * font * 0.6 + 12);
    const d = this.data.features.length;
    const cellWidth = (width - labelWidth) / d;
    const height = top + rowHeight * this.rows.length + 4;
    const svg = this.svg;
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    const parts = [];
    const text = (x, y, content, attrs = {}) => {
      const t = document.createElementNS(SVG, "text");
      for (const [k, v] of Object.entries({ x, y, "font-size": font, ...attrs })) t.setAttribute(k, String(v));
      t.textContent = content;
      return t;
    };
    this.data.features.forEach((f, j) => {
      parts.push(text(labelWidth + (j + 0.5) * cellWidth, font + 4, f, { "text-anchor": "middle", class: "tick" }));
    });
    this.rows.forEach((row, i) => {
      const y = top + i * rowHeight;
      const label = row.label.length > LABEL_CHARS ? `${row.label.slice(0, LABEL_CHARS - 1)}…` : row.label;
      const name = text(labelWidth - 8, y + rowHeight / 2, label, { "text-anchor": "end", "dominant-baseline": "central", class: "tick" });
      if (label !== row.label) name.append(Object.assign(document.createElementNS(SVG, "title"), { textContent: row.label }));
      parts.push(name);
      row.cells.forEach((cell, j) => {
        const x = labelWidth + j * cellWidth;
        const rect = document.createElementNS(SVG, "rect");
        for (const [k, v] of Object.entries({ x, y, width: cellWidth, height: rowHeight, fill: cell.fill, "data-row": i, "data-col": j })) {
          rect.setAttribute(k, String(v));
        }
        parts.push(rect);
        parts.push(
          text(x + cellWidth / 2, y + rowHeight / 2, cell.text, {
            "text-anchor": "middle",
            "dominant-baseline": "central",
            style: `fill: ${cell.ink}`, // over the figure's text colour
            "pointer-events": "none",
            class: "cell",
          }),
        );
      });
    });
    for (const [i, j] of this.outlined) {
      const rect = document.createElementNS(SVG, "rect");
      const attrs = { x: labelWidth + j * cellWidth + 1.5, y: top + i * rowHeight + 1.5, width: cellWidth - 3, height: rowHeight - 3 };
      for (const [k, v] of Object.entries({ ...attrs, fill: "none", stroke: this.data.highlight, "stroke-width": 3, "pointer-events": "none", class: "outlined" })) {
        rect.setAttribute(k, String(v));
      }
      parts.push(rect);
    }
    svg.classList.toggle("lnlab-live-pickable", this.local.step === CELLS);
    svg.replaceChildren(...parts);
  }

  // ------------------------------------------------------------------ what the user does

  picked(pick, index, event) {
    if (pick === this.local.pick && index === (pick === TOKEN ? this.local.token : this.local.feature)) return;
    this.mark(event);
    if (pick !== this.local.pick) this.change("pick", pick);
    this.change(pick === TOKEN ? "token" : "feature", index);
    this.render();
    this.settled("pick", SEND_PICK_AFTER_MS);
  }

  announcement(name) {
    const k = this.local.step;
    if (name === "pick") {
      const s = this.statistic();
      return `${s.words}: ${s.cells.length} cells, mean ${fmt(s.mean)}, variance ${fmt(s.var)}.`;
    }
    return `Section ${k + 1} of ${this.data.sections.length}, ${this.data.steps[k].title}.`;
  }
}

export const mount = mounter(PaddingLesson);
