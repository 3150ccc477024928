// The bars grow with the steps, as lnlab.labs.step_through.plots.token_bars draws them.
import assert from "node:assert/strict";
import { test } from "node:test";
import { axis, barsMarkup } from "../../static/lnlab/bars.mjs";

const colours = { input: "#0072B2", mean: "#D55E00", xHat: "#009E73", y: "#CC79A7" };
const size = { width: 480, height: 360, font: 14 };
const token = { x: [2, 4, 6, 8], xHat: [-1.34, -0.45, 0.45, 1.34], y: [-1.34, -0.45, 0.45, 1.34], mean: 5, std: 2.2361 };
const bars = (markup, colour) => markup.split(`fill="${colour}"/>`).length - 1;

test("x from the first step, the band from the third, x̂ from the fourth, y at the fifth", () => {
  const first = barsMarkup(token, 0, colours, size);
  assert.equal(bars(first, colours.input), 4 + 1); // four bars and the legend's swatch
  assert.match(first, /x̂ appears at step 4/);
  assert.doesNotMatch(first, /band: μ ± σ_ε/);
  assert.match(barsMarkup(token, 2, colours, size), /band: μ ± σ_ε, σ_ε = 2.2361/);
  const fourth = barsMarkup(token, 3, colours, size);
  assert.equal(bars(fourth, colours.xHat), 4 + 1);
  assert.equal(bars(fourth, colours.y), 0);
  assert.equal(bars(barsMarkup(token, 4, colours, size), colours.y), 4 + 1);
});

test("a token whose x̂ is NaN says so instead of drawing it", () => {
  const constant = { x: [3, 3], xHat: [NaN, NaN], y: [NaN, NaN], mean: 3, std: 0 };
  const markup = barsMarkup(constant, 4, colours, size);
  assert.match(markup, /x̂ = 0 \/ 0 = NaN: nothing to draw/);
  assert.doesNotMatch(markup, /NaN"/); // no coordinate is NaN
});

test("an axis takes in 0 and every finite value, even ±1.7e308", () => {
  const a = axis([2, 8, NaN]);
  assert.ok(a.lo <= 0 && a.hi >= 8 && a.ticks.includes(0));
  const huge = axis([1.7e308, -1.7e308]);
  assert.ok(Number.isFinite(huge.lo) && Number.isFinite(huge.hi));
  const markup = barsMarkup({ ...token, x: [1.7e308, -1.7e308, 1, 0], mean: 0.25 }, 0, colours, size);
  assert.doesNotMatch(markup, /NaN|Infinity/);
});
