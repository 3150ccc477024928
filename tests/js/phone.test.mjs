// A phone drawn by the page (static/lnlab/phone.mjs): what it shows at each stage of a question,
// the score once its answer is revealed (counted once, and only for its own question), and what a
// screen reader hears.
import assert from "node:assert/strict";
import { test } from "node:test";
import { news, scored, stage } from "../../static/lnlab/phone.mjs";

const asked = { qid: "q1", prompt: "The mean?", data: "x = (2, 4)", options: ["3", "6"], revealed: false };
const revealed = { ...asked, revealed: true, right: [0], feedback: ["Yes.", "The sum."], explanation: "" };

test("a phone shows options, its answer, the reveal, or the wait for a first question", () => {
  assert.equal(stage(null, null), "waiting");
  assert.equal(stage(asked, null), "options");
  assert.equal(stage(asked, "6"), "sent");
  assert.equal(stage(revealed, null), "revealed");
  assert.equal(stage(revealed, "3"), "revealed");
});

test("the reveal of its own answer counts once, right or not", () => {
  const score = { right: 2, answered: 3 };
  assert.deepEqual(scored(score, { qid: "q1", mine: "3" }, revealed), { right: 3, answered: 4 });
  assert.deepEqual(scored(score, { qid: "q1", mine: "6" }, revealed), { right: 2, answered: 4 });
  assert.equal(scored(score, { qid: "q1", mine: "3" }, asked), null); // not revealed yet
  assert.equal(scored(score, { qid: "q0", mine: "3" }, revealed), null); // another question's
  assert.equal(scored(score, null, revealed), null); // nothing answered: nothing to count
});

test("a screen reader hears the news of each stage", () => {
  assert.equal(news(null, null, "waiting"), "Waiting for the teacher's first question.");
  assert.equal(news(asked, null, "options"), "New question: The mean? With: x = (2, 4)");
  assert.equal(news({ ...asked, data: "" }, null, "options"), "New question: The mean?");
  assert.equal(news(asked, "6", "sent"), "Your answer: 6. Waiting for the reveal.");
  assert.equal(news(revealed, "3", "revealed"), "The answer: 3. You answered 3: right.");
  assert.equal(news(revealed, "6", "revealed"), "The answer: 3. You answered 6: not right.");
  assert.equal(news(revealed, null, "revealed"), "The answer: 3. You did not answer this one.");
});
