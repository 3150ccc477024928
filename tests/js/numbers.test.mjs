// The page's number formatter against lnlab.core.numbers.fmt, character for character: exact
// ties at 4 decimals and at 4 significant digits (where JavaScript's own rounding goes the
// other way), the edges of the fixed range, zero up to rounding, NaN and the infinities.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fmt, scaleOf } from "../../static/lnlab/numbers.mjs";
import { casesDir, readJson } from "./cases.mjs";

const cases = readJson(casesDir(), "numbers.json");

test("fmt writes every number as Python writes it", () => {
  const wrong = cases
    .filter(([value, scale, shown]) => fmt(value, scale) !== shown)
    .map(([value, scale, shown]) => `${value} (scale ${scale}): ${fmt(value, scale)}, not ${shown}`);
  assert.ok(cases.length > 10_000);
  assert.deepEqual(wrong.slice(0, 20), []);
});

test("exact ties go to the even neighbour, as in Python", () => {
  assert.equal((0.03125).toFixed(4), "0.0313"); // what JavaScript alone would show
  assert.equal(fmt(0.03125), "0.0312");
  assert.equal(fmt(-0.03125), "-0.0312");
  assert.equal(fmt(0.09375), "0.0938");
  assert.equal(fmt(1234500), "1.234e+06");
  assert.equal(fmt(1235500), "1.236e+06");
  assert.equal(fmt(9999500), "1e+07");
});

test("the scale of a row ignores what is not finite", () => {
  assert.equal(scaleOf([1, -3, NaN, Infinity]), 3);
  assert.equal(scaleOf([0, NaN]), 1);
});
