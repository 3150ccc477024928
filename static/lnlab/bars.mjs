// One token before and after, as SVG: what lnlab.labs.step_through.plots.token_bars draws with
// Plotly, drawn in the page so that it follows a slider at the screen's frame rate.
//
// Left: the input x as bars, its mean as a dashed line and, from step 3, the band mean ± sigma_eps.
// Right, from step 4: x_hat with its band 0 ± 1, then y beside it at step 5. The figure grows
// with the steps; the empty right panel says when it fills.
import { fmt } from "./numbers.mjs";

const SPACING = 0.12; // between the two panels, as a share of the width (as plots.SPACING)
const BAND_OPACITY = 0.15;
const AXIS = 44; // px for an axis's tick labels
const TICKS = 5;

/**
 * The figure's markup for an <svg> of `width` x `height` px. `t` holds x, xHat, y, mean and std
 * (sigma_eps); `step` is 0-based (0..4); `colours` has input, mean, xHat and y; `font` is the
 * text size in px.
 */
export function barsMarkup(t, step, colours, { width, height, font }) {
  const line = font * 1.25;
  const leftTitle = ["input x", `dashed: μ = ${fmt(t.mean)}`];
  const band = step >= 2 && Number.isFinite(t.std) && t.std > 0;
  if (band) leftTitle.push(`band: μ ± σ_ε, σ_ε = ${fmt(t.std)}`);
  const rightTitle = ["x̂, then y"];
  if (step >= 3) rightTitle.push("band: 0 ± 1");
  const top = line * 3 + 8;
  const bottom = line * 2 + 12; // feature names, then the legend
  const plotWidth = width - 2 * AXIS;
  const panelWidth = (plotWidth * (1 - SPACING)) / 2;
  const panels = [AXIS, AXIS + panelWidth + plotWidth * SPACING + AXIS / 2];
  const box = { top, height: Math.max(40, height - top - bottom), width: panelWidth - AXIS / 4 };
  const parts = [];
  parts.push(title(leftTitle, panels[0] + box.width / 2, line, font));
  parts.push(title(rightTitle, panels[1] + box.width / 2, line, font));

  const left = [t.x];
  const leftExtent = [...t.x, t.mean];
  if (band) leftExtent.push(t.mean - t.std, t.mean + t.std);
  const leftAxis = axis(leftExtent);
  parts.push(frame(panels[0], box, leftAxis, font));
  if (band) parts.push(rect(panels[0], box, leftAxis, t.mean - t.std, t.mean + t.std, colours.mean));
  parts.push(bars(panels[0], box, leftAxis, left, [colours.input]));
  parts.push(hline(panels[0], box, leftAxis, t.mean, colours.mean));
  parts.push(featureNames(panels[0], box, t.x.length, font));

  const undefinedHat = Array.prototype.some.call(t.xHat, Number.isNaN);
  if (step >= 3 && !undefinedHat) {
    const shown = step >= 4 ? [t.xHat, t.y] : [t.xHat];
    const rightAxis = axis([...shown.flatMap((v) => Array.from(v)), -1, 1]);
    parts.push(frame(panels[1], box, rightAxis, font));
    parts.push(rect(panels[1], box, rightAxis, -1, 1, colours.mean));
    parts.push(bars(panels[1], box, rightAxis, shown, [colours.xHat, colours.y]));
    parts.push(hline(panels[1], box, rightAxis, 0, colours.mean));
    parts.push(featureNames(panels[1], box, t.x.length, font));
  } else {
    const note = step < 3 ? "x̂ appears at step 4" : "x̂ = 0 / 0 = NaN: nothing to draw";
    parts.push(frame(panels[1], box, axis([-1, 1]), font));
    const cx = panels[1] + box.width / 2;
    const middle = { x: cx, y: box.top + box.height / 2, "text-anchor": "middle" };
    parts.push(tag("text", { class: "note", ...middle, "font-size": font }, note));
  }
  const legend = [["x", colours.input]];
  if (step >= 3 && !undefinedHat) legend.push(["x̂", colours.xHat]);
  if (step >= 4 && !undefinedHat) legend.push(["y", colours.y]);
  parts.push(legendMarkup(legend, width / 2, height - line / 2, font));
  return parts.join("");
}

/** The value range a panel shows, 0 included, and its tick values. */
export function axis(values) {
  let lo = 0;
  let hi = 0;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  if (lo === hi) hi = lo + 1;
  const pad = (hi / 2 - lo / 2) * 0.12; // halves first: 1.7e308 - (-1.7e308) would overflow
  lo = Math.max(lo - (lo < 0 ? pad : 0), -Number.MAX_VALUE);
  hi = Math.min(hi + (hi > 0 ? pad : 0), Number.MAX_VALUE);
  const step = niceStep(hi / TICKS - lo / TICKS);
  const ticks = [];
  if (Number.isFinite(step) && step > 0) {
    for (let v = Math.ceil(lo / step) * step; v <= hi && ticks.length <= 2 * TICKS; v += step) {
      ticks.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
  }
  return { lo, hi, ticks };
}

function niceStep(rough) {
  const power = 10 ** Math.floor(Math.log10(rough));
  const m = rough / power;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * power;
}

/** The y pixel of value v: the range is scaled first, so 1e308 - (-1e308) stays finite. */
function yOf(box, ax, v) {
  const m = Math.max(Math.abs(ax.lo), Math.abs(ax.hi));
  const share = (v / m - ax.lo / m) / (ax.hi / m - ax.lo / m);
  return box.top + box.height * (1 - Math.min(1.5, Math.max(-0.5, share)));
}

function frame(x0, box, ax, font) {
  const parts = [];
  for (const v of ax.ticks) {
    const y = yOf(box, ax, v);
    parts.push(tag("line", { class: "grid", x1: x0, x2: x0 + box.width, y1: y, y2: y }));
    const label = { x: x0 - 6, y, dy: "0.35em", "text-anchor": "end", "font-size": font * 0.85 };
    parts.push(tag("text", { class: "tick", ...label }, fmt(v, ax.hi - ax.lo)));
  }
  const zero = yOf(box, ax, 0);
  parts.push(tag("line", { class: "zero", x1: x0, x2: x0 + box.width, y1: zero, y2: zero }));
  return parts.join("");
}

function bars(x0, box, ax, series, colours) {
  const n = series[0].length;
  const slot = box.width / n;
  const barWidth = (slot * 0.8) / series.length;
  const zero = yOf(box, ax, 0);
  const parts = [];
  series.forEach((values, s) => {
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (!Number.isFinite(v)) continue;
      const y = yOf(box, ax, v);
      const x = x0 + slot * i + slot * 0.1 + barWidth * s;
      const height = Math.max(Math.abs(zero - y), 0.5);
      const bar = { x, y: Math.min(y, zero), width: barWidth, height, fill: colours[s] };
      parts.push(tag("rect", bar));
    }
  });
  return parts.join("");
}

function hline(x0, box, ax, v, colour) {
  if (!Number.isFinite(v)) return "";
  const y = yOf(box, ax, v);
  return tag("line", { class: "mean", x1: x0, x2: x0 + box.width, y1: y, y2: y, stroke: colour });
}

function rect(x0, box, ax, lo, hi, colour) {
  const y1 = yOf(box, ax, hi);
  const y0 = yOf(box, ax, lo);
  const band = { x: x0, y: y1, width: box.width, height: Math.max(0, y0 - y1) };
  return tag("rect", { ...band, fill: colour, opacity: BAND_OPACITY });
}

/** f1..fD under the bars, every k-th when they would not fit. */
function featureNames(x0, box, n, font) {
  const slot = box.width / n;
  const every = Math.max(1, Math.ceil((font * 2.2) / slot));
  const parts = [];
  for (let i = 0; i < n; i += every) {
    const at = { x: x0 + slot * (i + 0.5), y: box.top + box.height + font * 1.2 };
    parts.push(tag("text", { class: "tick", ...at, "text-anchor": "middle", "font-size": font * 0.85 }, `f${i + 1}`));
  }
  return parts.join("");
}

/** SVG markup of one element: numbers rounded to 0.1 px; `text` is trusted (numbers, fixed words). */
function tag(name, attrs, text) {
  const written = Object.entries(attrs).map(
    ([k, v]) => `${k}="${typeof v === "number" ? Math.round(v * 10) / 10 : v}"`,
  );
  const open = `<${name} ${written.join(" ")}`;
  return text === undefined ? `${open}/>` : `${open}>${text}</${name}>`;
}

function title(lines, cx, line, font) {
  const spans = lines.map((text, i) => `<tspan x="${cx}" dy="${i === 0 ? 0 : line}">${text}</tspan>`);
  return `<text class="title" x="${cx}" y="${line}" text-anchor="middle" font-size="${font}">${spans.join("")}</text>`;
}

function legendMarkup(entries, cx, y, font) {
  const itemWidth = font * 3.2;
  let x = cx - (entries.length * itemWidth) / 2;
  const parts = [];
  for (const [name, colour] of entries) {
    parts.push(tag("rect", { x, y: y - font * 0.75, width: font, height: font * 0.8, fill: colour }));
    parts.push(tag("text", { class: "legend", x: x + font * 1.3, y, "font-size": font }, name));
    x += itemWidth;
  }
  return parts.join("");
}
