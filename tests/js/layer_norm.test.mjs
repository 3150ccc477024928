// The page's Layer Norm (static/lnlab/layer_norm.mjs) against lnlab's numpy path on the tokens
// Python wrote (tests/js/cases.py): at least 100,000 random ones and the hard ones.
//
// Three checks on every result (mean, var, sigma_eps, each x_hat and y):
// - the formatter alone: fmt of numpy's own value is the text Python wrote (no tolerance);
// - the computation: the mean is numpy's to the bit (the same pairwise sum); var, sigma_eps,
//   x_hat and y are within 1e-13 of it, relative (numpy sums the squares with BLAS, in an order
//   that depends on the CPU, so they may differ in the last few bits);
// - what the page shows: fmt of the JavaScript value is the text Python wrote, except where
//   numpy's value and ours, a few bits apart, fall either side of a rounding boundary. That
//   happens where the exact result is a decimal tie (numbers typed with few decimals give
//   variances like 27.36455): the test names each one and fails on any other difference. The
//   page shows Python's own numbers at rest and its own only while a value moves
//   (static/lnlab/step_through.mjs), so these can last no longer than a drag.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { layerNorm } from "../../static/lnlab/layer_norm.mjs";
import { fmt } from "../../static/lnlab/numbers.mjs";
import { casesDir, ulps } from "./cases.mjs";

const RELATIVE = 1e-13;
const STRADDLE_ULPS = 8n; // values this close that show differently sit either side of a boundary
const NAMES = ["mean", "var", "std"];

function read(dir) {
  const bytes = readFileSync(join(dir, "tokens.f64"));
  const numbers = new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const shown = readFileSync(join(dir, "tokens.txt"), "utf8").split("\n");
  return { numbers, shown };
}

function close(js, np, scale) {
  if (Number.isNaN(np) || !Number.isFinite(np)) return Object.is(js, np) || js === np;
  return Math.abs(js - np) <= RELATIVE * scale;
}

test("every token's numbers are numpy's at the precision the page shows", (t) => {
  const { numbers, shown } = read(casesDir());
  const wrongFormat = [];
  const wrongValue = [];
  const wrongShown = [];
  const straddles = [];
  const most = { var: 0n, std: 0n, xHat: 0n };
  let tokens = 0;
  let values = 0;
  let at = 0;
  let line = 0;
  while (at < numbers.length) {
    const d = numbers[at];
    const eps = numbers[at + 1];
    const x = numbers.subarray(at + 2, at + 2 + d);
    const gamma = numbers.subarray(at + 2 + d, at + 2 + 2 * d);
    const beta = numbers.subarray(at + 2 + 2 * d, at + 2 + 3 * d);
    const expected = numbers.subarray(at + 2 + 3 * d, at + 5 + 5 * d);
    at += 5 + 5 * d;
    const r = layerNorm(Array.from(x), gamma, beta, eps);
    const ours = [r.mean, r.var, r.std, ...r.xHat, ...r.y];
    for (let i = 0; i < ours.length; i++, line++, values++) {
      const np = expected[i];
      const js = ours[i];
      const what = i < 3 ? NAMES[i] : i < 3 + d ? "xHat" : "y";
      const where = `token ${tokens + 1} (D = ${d}, eps = ${eps}) ${what}`;
      if (fmt(np) !== shown[line]) wrongFormat.push(`${where}: fmt(${np}) = ${fmt(np)}, not ${shown[line]}`);
      let scale = Math.abs(np);
      if (what === "y") {
        const f = i - 3 - d;
        scale = Math.abs(gamma[f] * r.xHat[f]) + Math.abs(beta[f]);
      }
      const ok = what === "mean" ? Object.is(js, np) || js === np : close(js, np, scale);
      if (!ok) wrongValue.push(`${where}: ${js}, numpy ${np}`);
      const apart = ulps(js, np);
      if (what !== "mean" && what !== "y" && Number.isFinite(np) && apart > most[what]) {
        most[what] = apart;
      }
      if (fmt(js) !== shown[line]) {
        const text = `${where}: shows ${fmt(js)}, numpy ${shown[line]} (${js} vs ${np})`;
        (apart <= STRADDLE_ULPS ? straddles : wrongShown).push(text);
      }
    }
    tokens++;
  }
  t.diagnostic(`${tokens} tokens, ${values} values; most ulps apart: ${JSON.stringify(most, (_k, v) => (typeof v === "bigint" ? Number(v) : v))}`);
  t.diagnostic(`shown differently, either side of a rounding boundary: ${straddles.length}`);
  for (const s of straddles) t.diagnostic(`  ${s}`);
  assert.ok(tokens >= 100_000, `only ${tokens} tokens`);
  assert.deepEqual(wrongFormat.slice(0, 10), []);
  assert.deepEqual(wrongValue.slice(0, 10), []);
  assert.deepEqual(wrongShown.slice(0, 10), []);
});

test("1e8 + x gives the answer for x, and a constant token gives beta", () => {
  const ones = [1, 1, 1, 1];
  const zeros = [0, 0, 0, 0];
  const plain = layerNorm([2, 4, 6, 8], ones, zeros, 1e-5);
  const shifted = layerNorm([1e8 + 2, 1e8 + 4, 1e8 + 6, 1e8 + 8], ones, zeros, 1e-5);
  assert.deepEqual(Array.from(shifted.xHat), Array.from(plain.xHat));
  assert.equal(plain.mean, 5);
  assert.equal(plain.var, 5);
  const constant = layerNorm([3, 3, 3], [2, 2, 2], [0.5, 0.5, 0.5], 1e-5);
  assert.deepEqual(Array.from(constant.y), [0.5, 0.5, 0.5]);
  assert.ok(layerNorm([3, 3], [1, 1], [0, 0], 0).xHat.every(Number.isNaN));
});
