// The formulas the page writes with a token's numbers, against lnlab.teach.steps.written_steps
// (and the summary line against token_summary), for the hard tokens and 2,000 random ones:
// given numpy's numbers, the LaTeX must be the same, character for character.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tokenSummary, writtenSteps } from "../../static/lnlab/steps.mjs";
import { casesDir, readJson } from "./cases.mjs";

const cases = readJson(casesDir(), "steps.json");

test("the five formulas are written as Python writes them", () => {
  const wrong = [];
  for (const [i, c] of cases.entries()) {
    const ours = writtenSteps(c);
    for (let k = 0; k < 5; k++) {
      if (ours[k] !== c.latex[k]) wrong.push(`case ${i}, step ${k + 1}:\n  ${ours[k]}\n  ${c.latex[k]}`);
    }
  }
  assert.ok(cases.length >= 2_000);
  assert.deepEqual(wrong.slice(0, 5), []);
});

test("the summary line is written as Python writes it", () => {
  const wrong = cases
    .filter((c) => tokenSummary(c.x, c.eps, c.gamma, c.beta) !== c.summary)
    .map((c) => `${tokenSummary(c.x, c.eps, c.gamma, c.beta)}\n  ${c.summary}`);
  assert.deepEqual(wrong.slice(0, 5), []);
});
