// A class device's pulse loop (static/lnlab/pulse.mjs) with a stub server: it says "ready" at
// its first pulse, triggers a rerun only when a watched field changes (once, until
// RETRIGGER_MS), says "failed" after FAILURES failed reads, and stops when unmounted.
import assert from "node:assert/strict";
import { test } from "node:test";
import follow, { asksAgain, differs, held } from "../../static/lnlab/pulse.mjs";

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

test("a read held until a change says what was drawn, as the server stamps it", () => {
  const url = held("/_lnlab/pulse/ABCDEFGHJ", ["qid", "revealed", "open"], pulse);
  const since = encodeURIComponent('["q1",false,true]');
  assert.equal(url, `/_lnlab/pulse/ABCDEFGHJ?watch=qid,revealed,open&since=${since}`);
  const none = held("/p?question=1", ["qid"], {}); // nothing drawn: null, answered at once
  assert.equal(none, `/p?question=1&watch=qid&since=${encodeURIComponent("[null]")}`);
});

test("the same change is asked again after 3 s, or after 1 s once no script runs", () => {
  const last = { change: "[2]", at: 1000 };
  assert.equal(asksAgain(undefined, "[2]", 1000, false), true); // never asked
  assert.equal(asksAgain(last, "[3]", 1001, false), true); // another change
  assert.equal(asksAgain(last, "[2]", 1999, true), false); // its run may still be coming
  assert.equal(asksAgain(last, "[2]", 2000, true), true); // nothing runs: that run is over
  assert.equal(asksAgain(last, "[2]", 3999, false), false); // a run goes on: wait for it
  assert.equal(asksAgain(last, "[2]", 4000, false), true);
  const retried = { ...last, retried: true }; // asked again once already: every 3 s from then
  assert.equal(asksAgain(retried, "[2]", 2500, true), false);
  assert.equal(asksAgain(retried, "[2]", 4000, true), true);
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

test("one loop per element, however often Streamlit calls; it stops once the element is gone", async () => {
  const calls = page([pulse]);
  const urls = [];
  const fetchPulse = globalThis.fetch;
  globalThis.fetch = (url) => {
    urls.push(url);
    return fetchPulse(url);
  };
  const host = { isConnected: true };
  try {
    const call = (url) =>
      follow({
        parentElement: host,
        data: { name: "count", url, every_ms: 5, watch: ["qid"], seen: pulse, status: "ready" },
        setStateValue: (name, value) => calls.states.push([name, value]),
        setTriggerValue: (name, value) => calls.triggers.push([name, value]),
      });
    const first = call("/first");
    const path = (u) => u.split("?")[0];
    await until(() => urls.map(path).includes("/first"));
    // the fragment drew again: new data for the same element, and no clean-up (as Streamlit)
    const second = call("/second");
    const seconds = () => urls.filter((u) => path(u) === "/second").length;
    await until(() => seconds() > 2);
    const before = urls.filter((u) => path(u) === "/first").length;
    await until(() => seconds() > 20);
    const firsts = urls.filter((u) => path(u) === "/first").length;
    assert.equal(firsts, before, "one loop, with the newest data");
    first(); // an older call's clean-up while the element is still on the page: it goes on
    const going = seconds();
    await until(() => seconds() > going + 5);
    host.isConnected = false;
    second();
    const stopped = urls.length;
    await settle(30);
    assert.ok(urls.length <= stopped + 1, "the element left the page: its loop stopped");
  } finally {
    globalThis.fetch = fetchPulse;
  }
});
