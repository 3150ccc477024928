// Where a formula may break, against lnlab.teach.mathml.pieces: every formula the step-through
// and padding lessons write in the page, cut at the same places as Python cuts it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pieces } from "../../static/lnlab/math.mjs";
import { casesDir, readJson } from "./cases.mjs";

const cases = readJson(casesDir(), "mathml.json");

test("a formula is cut where Python cuts it", () => {
  const wrong = cases.filter(([tex, cut]) => JSON.stringify(pieces(tex)) !== JSON.stringify(cut));
  assert.ok(cases.length >= 1_000);
  assert.deepEqual(wrong.slice(0, 5), []);
});

test("nothing is cut inside braces or \\left ... \\right", () => {
  assert.deepEqual(pieces(String.raw`\sqrt{a + b} = \left(c + d\right)`), [
    String.raw`\sqrt{a + b} =`,
    String.raw` \left(c + d\right)`,
  ]);
  assert.deepEqual(pieces(String.raw`[1,\allowbreak\ 2]`), ["[1,", String.raw`\ 2]`]);
});
