// The lesson's bookkeeping that needs no page: which values an echo from Python may replace,
// how a typed number is read, and the epsilon slider's stops.
import assert from "node:assert/strict";
import { test } from "node:test";
import { merge } from "../../static/lnlab/live_lesson.mjs";
import { EPS_CHOICES, parseNumber } from "../../static/lnlab/step_through.mjs";

const server = { step: 0, eps: 1e-5, gamma: [1, 1], beta: [0, 0], x: [2, 4] };
const untouched = { step: 0, eps: 0, gamma: 0, beta: 0, x: 0 };

test("an echo older than a value changed here leaves that value alone", () => {
  const local = { step: 2, eps: 0.1, gamma: [2, 2], beta: [0, 0], x: [2, 4] };
  // epsilon moved at revision 7, the step at 5; Python has applied revision 5
  const shown = merge(local, server, { ...untouched, step: 5, eps: 7 }, 5);
  assert.equal(shown.eps, 0.1); // still being dragged: not snapped back to 1e-5
  assert.equal(shown.step, 0); // Python has it (and moved elsewhere since): Python's
  assert.deepEqual(shown.gamma, [1, 1]);
});

test("once Python has applied everything, its values are shown", () => {
  const local = { step: 2, eps: 0.1, gamma: [2, 2], beta: [0, 0], x: [2, 4] };
  assert.deepEqual(merge(local, server, { ...untouched, eps: 7 }, 7), server);
  assert.deepEqual(merge(null, server, untouched, 0), server);
});

test("a typed number is read as lnlab.core.parse reads one", () => {
  assert.deepEqual(parseNumber(" 2.5 "), { value: 2.5 });
  assert.deepEqual(parseNumber("\u22123e-2"), { value: -0.03 });
  assert.deepEqual(parseNumber(".5"), { value: 0.5 });
  for (const bad of ["", "1..2", "nan", "inf", "1_000", "0x10", "2,5"]) {
    assert.ok(parseNumber(bad).error, bad);
  }
  assert.match(parseNumber("1e309").error, /too large/);
  assert.match(parseNumber("1e-400").error, /too small/);
  assert.deepEqual(parseNumber("0e-400"), { value: 0 });
  assert.deepEqual(parseNumber("1e-310"), { value: 1e-310 });
});

test("epsilon's slider stops at 0 and at 1, 2 and 5 times each power of ten up to 1", () => {
  assert.equal(EPS_CHOICES[0], 0);
  assert.ok(EPS_CHOICES.includes(1e-5));
  assert.equal(EPS_CHOICES.at(-1), 1);
  assert.equal(EPS_CHOICES.length, 26);
  assert.deepEqual([...EPS_CHOICES].sort((a, b) => a - b), EPS_CHOICES);
});
