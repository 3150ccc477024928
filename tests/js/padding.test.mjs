// The padding lesson's statistics as the page writes them (static/lnlab/padding.mjs), against
// lnlab.labs.padding.lesson.statistic_latex on 200 random padded batches: given Python's mean
// and variance, the cells picked and the three formulas must be Python's, character for character.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pickedCells, statisticLatex, statisticSymbol } from "../../static/lnlab/padding.mjs";
import { casesDir, readJson } from "./cases.mjs";

const batches = readJson(casesDir(), "padding.json");

test("every statistic's formulas are written as Python writes them", () => {
  const wrong = [];
  let picks = 0;
  for (const [b, batch] of batches.entries()) {
    for (const p of batch.picks) {
      picks += 1;
      const values = pickedCells(batch.rows, p.pick, p.index).map(([i, j]) => batch.rows[i].values[j]);
      assert.equal(values.length, p.n, `batch ${b}, ${p.pick} ${p.index}: the cells picked`);
      const ours = statisticLatex(values, statisticSymbol(p.pick, p.index, batch.features), p.mean, p.var);
      for (let k = 0; k < 3; k++) {
        if (ours[k] !== p.latex[k]) wrong.push(`batch ${b}, ${p.pick} ${p.index}, formula ${k + 1}:\n  ${ours[k]}\n  ${p.latex[k]}`);
      }
    }
  }
  assert.ok(batches.length >= 200 && picks >= 5_000, `${picks} picks`);
  assert.deepEqual(wrong.slice(0, 5), []);
});

test("a masked column leaves the PAD rows out, a naive one keeps them, a token is its row", () => {
  const rows = [
    { pad: false, values: [5, 1, 8] },
    { pad: true, values: [0, 0, 0] },
    { pad: false, values: [4, 2, 6] },
  ];
  assert.deepEqual(pickedCells(rows, "naive", 1), [[0, 1], [1, 1], [2, 1]]);
  assert.deepEqual(pickedCells(rows, "masked", 1), [[0, 1], [2, 1]]);
  assert.deepEqual(pickedCells(rows, "token", 2), [[2, 0], [2, 1], [2, 2]]);
});
