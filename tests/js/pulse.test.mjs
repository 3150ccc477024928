// A class device's pulse loop (static/lnlab/pulse.mjs) with a stub server: it says "ready" at
// its first pulse, triggers a rerun only when a watched field changes (once, until
// RETRIGGER_MS), says "failed" after FAILURES failed reads, and stops when unmounted.
import assert from "node:assert/strict";
import { test } from "node:test";
import follow, { differs } from "../../static/lnlab/pulse.mjs";

const pulse = { qid: "q1", revealed: false, answered: 3, joined: 30, open: true };

function page(answers) {
  const calls = { fetched: 0, states: [], triggers: [] };
  globalThis.document = { hidden: false, addEventListener() {}, removeEventListener() {} };
  globalThis.fetch = async () => {
    calls.fetched += 1;
    const next = answers.length > 1 ? answers.shift() : answers[0];
    if (next instanceof Error) throw next;
    return { ok: next.status === undefined, status: next.status ?? 200, json: async () => next };
  };
  return calls;
}

function mount(data, calls) {
  return follow({
    data: { url: "/_lnlab/pulse/ABCDEFGHJ", every_ms: 5, watch: ["qid", "revealed"], ...data },
    setStateValue: (name, value) => calls.states.push([name, value]),
    setTriggerValue: (name, value) => calls.triggers.push([name, value]),
  });
}

const settle = (ms) => new Promise((done) => setTimeout(done, ms));

async function until(ready) {
  // no test depends on timing: wait for what must happen, however slow the machine
  for (let waited = 0; !ready(); waited += 5) {
    assert.ok(waited < 60000, "it never happened");
    await settle(5);
  }
}

test("a watched field that differs is a change; an unwatched one is not", () => {
  assert.equal(differs(pulse, { ...pulse, answered: 9 }, ["qid", "revealed"]), false);
  assert.equal(differs(pulse, { ...pulse, revealed: true }, ["qid", "revealed"]), true);
  assert.equal(differs(pulse, null, ["qid"]), true); // nothing drawn yet
});

test("the first pulse says ready; nothing changed, nothing reruns", async () => {
  const calls = page([pulse]);
  const stop = mount({ seen: pulse, status: "" }, calls);
  await until(() => calls.fetched > 3);
  stop();
  assert.deepEqual(calls.states, [["status", "ready"]]);
  assert.deepEqual(calls.triggers, []);
  const fetched = calls.fetched;
  await settle(30);
  assert.equal(calls.fetched, fetched, "an unmounted device stops asking");
});

test("a new question reruns the fragment once, not at every read", async () => {
  const calls = page([{ ...pulse, qid: "q2" }]);
  const stop = mount({ seen: pulse, status: "ready" }, calls);
  await until(() => calls.fetched > 3);
  stop();
  assert.equal(calls.triggers.length, 1);
  assert.equal(calls.triggers[0][0], "changed");
  assert.equal(calls.triggers[0][1].qid, "q2");
});

test("reads that keep failing say so once; a failed first read says nothing", async () => {
  let calls = page([{ status: 503 }]);
  let stop = mount({ seen: pulse, status: "ready" }, calls);
  await until(() => calls.fetched >= 6);
  stop();
  assert.equal(calls.states.length, 1);
  assert.match(calls.states[0][1], /^failed: the server answered 503/);
  calls = page([new Error("offline")]);
  stop = mount({ seen: pulse, status: "" }, calls);
  await settle(100);
  stop();
  assert.deepEqual(calls.states, []); // never ready: the fragment's timer goes on
});
