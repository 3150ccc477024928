// The page's number formatter against lnlab.core.numbers.fmt, character for character: exact
// ties at 4 decimals and at 4 significant digits (where JavaScript's own rounding goes the
// other way), the edges of the fixed range, zero up to rounding, NaN and the infinities.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fmt, fmtApart, scaleOf, shortest } from "../../static/lnlab/numbers.mjs";
import { casesDir, readJson } from "./cases.mjs";

const cases = readJson(casesDir(), "numbers.json");

test("fmt writes every number as Python writes it", () => {
  const wrong = cases
    .filter(([value, scale, shown]) => fmt(value, scale) !== shown)
    .map(([value, scale, shown]) => `${value} (scale ${scale}): ${fmt(value, scale)}, not ${shown}`);
  assert.ok(cases.length > 10_000);
  assert.deepEqual(wrong.slice(0, 20), []);
});

test("shortest writes every number as Python's repr does", () => {
  const wrong = cases
    .filter(([value, , , exact]) => shortest(value) !== exact)
    .map(([value, , , exact]) => `${value}: ${shortest(value)}, not ${exact}`);
  assert.deepEqual(wrong.slice(0, 20), []);
});

test("values that would read the same are written exactly", () => {
  assert.deepEqual(fmtApart([1e8 + 1, 1e8 + 2]), ["100000001", "100000002"]);
  assert.deepEqual(fmtApart([1e6, 1e6]), ["1e+06", "1e+06"]);
  assert.deepEqual(fmtApart([2, 4]), ["2", "4"]);
});

test("exact ties go to the even neighbour, as in Python", () => {
  assert.equal((0.03125).toFixed(4), "0.0313"); // what JavaScript alone would show
  assert.equal(fmt(0.3125), "0.3125");
  assert.equal(fmt(0.15625), "0.1562");
  assert.equal(fmt(-0.15625), "-0.1562");
  assert.equal(fmt(0.09375), "0.09375"); // under 0.1: 4 significant digits, no tie
  assert.equal((0.078125).toFixed(5), "0.07813");
  assert.equal(fmt(0.078125), "0.07812");
  assert.equal(fmt(-0.015625), "-0.01562");
  assert.equal(fmt(0.5), "0.5");
  assert.equal(fmt(1234500), "1.234e+06");
  assert.equal(fmt(1235500), "1.236e+06");
  assert.equal(fmt(9999500), "1e+07");
});

test("the scale of a row ignores what is not finite", () => {
  assert.equal(scaleOf([1, -3, NaN, Infinity]), 3);
  assert.equal(scaleOf([0, NaN]), 1);
});
