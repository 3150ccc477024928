// A live class's device follows the class by its pulse (lnlab.ui.pulse): it asks the server
// for the class's pulse, a few bytes of JSON that no script run makes, and reruns its fragment
// (a trigger) only when a field it watches differs from what the fragment drew. While the
// pulse is as drawn, it asks the server to hold the request until a watched field changes
// (`since`: lnlab.ui.server.waiting), so a change reaches the page as soon as it is stored;
// while a change is not drawn yet, it reads every `every_ms`. The first pulse read tells
// Python that this browser can ("ready"); FAILURES in a row after that tell it that it
// cannot ("failed: ..."), and the fragment goes back to its timer.
//
// Streamlit calls this module again with each new `data` (each time the fragment drew) and
// calls the clean-up only when the element leaves the page: one loop per element takes the
// newest data (a loop per call kept every older one asking, with what it had drawn then: a
// teacher's page had 12 count loops after one question, each asking again every 3 s).

const FAILURES = 5;
const RETRIGGER_MS = 3000; // a change still unseen this long after a trigger is sent again
const LOST_MS = 1000; // or this long, if no script is running: the run it asked for is over
const MAX_WAIT_MS = 10000;
const READ_TIMEOUT_MS = 10000; // a read that hangs (a dead connection, a sleeping laptop) fails
const HOLD_MS = 20000; // the server answers a held read within this (lnlab.ui.server.waiting)

// What each view last asked Python to redraw for, and when: a view may be drawn again (with
// what it drew before) while its rerun runs, and must not ask twice for the same change.
const asked = new Map();
const loops = new WeakMap(); // the component's element -> its loop

export function differs(pulse, seen, fields) {
  if (!seen) return true;
  return fields.some((name) => pulse[name] !== seen[name]);
}

/** The read of `url` that the server holds until `fields` of the pulse differ from `seen`
 * (lnlab.ui.server.board.stamp writes the same JSON). */
export function held(url, fields, seen) {
  const since = JSON.stringify(fields.map((name) => seen[name] ?? null));
  const sep = url.includes("?") ? "&" : "?";
  return `${url}${sep}watch=${fields.join(",")}&since=${encodeURIComponent(since)}`;
}

/**
 * Whether to ask Python (again) to redraw for `change`, last asked as `last` ({change, at,
 * retried}), at `now`: a new change at once; the same one again after RETRIGGER_MS, or once
 * after LOST_MS if no script runs (`idle`). A trigger that reaches the server while the whole
 * page runs joins that run, and if the run has already drawn this view, it ends without the
 * change: the projector's count was then 3 s late (2 of 9 whole-lesson tests). Once only: a
 * view that never draws what the pulse says (a class it cannot read) asks every 3 s, not 1.
 */
export function asksAgain(last, change, now, idle) {
  if (!last || last.change !== change) return true;
  const waited = now - last.at;
  return waited >= RETRIGGER_MS || (idle && !last.retried && waited >= LOST_MS);
}

/** Whether the page runs no script now (Streamlit's own mark; unknown: false). */
function idle() {
  const app = document.querySelector?.('[data-testid="stApp"]');
  return app?.getAttribute("data-test-script-state") === "notRunning";
}

export default function (component) {
  const host = component.parentElement ?? {}; // none in node tests: a loop per call
  let loop = loops.get(host);
  if (!loop) {
    loop = follow(host);
    if (component.parentElement) loops.set(host, loop);
  }
  loop.update(component);
  return loop.stop;
}

/** The loop of one element: `update` gives it a call's data and functions; `stop` ends it
 * once the element has left the page (Streamlit may call an older call's clean-up before). */
function follow(host) {
  let data, setStateValue, setTriggerValue, told, view;
  let failures = 0;
  let timer = null;
  let stopped = false;
  let reading = null; // the read under way: its AbortController
  let last = null; // the last pulse read for the data drawn now

  async function tick() {
    if (host.isConnected === false) stop(true);
    if (stopped) return;
    let wait = data.every_ms;
    const drawn = data;
    if (!document.hidden) {
      // as drawn: the server holds the read until a change; else (a change not drawn yet,
      // or the browser's first read) it answers at once
      const hold = told === "ready" && !(last && differs(last, data.seen, data.watch));
      const url = hold ? held(data.url, data.watch, data.seen) : data.url;
      reading = new AbortController();
      const began = performance.now();
      try {
        const limit = AbortSignal.timeout(READ_TIMEOUT_MS + (hold ? HOLD_MS : 0));
        const reply = await fetch(url, {
          cache: "no-store",
          credentials: "same-origin",
          signal: AbortSignal.any ? AbortSignal.any([limit, reading.signal]) : limit,
        });
        if (!reply.ok) throw new Error(`the server answered ${reply.status}`);
        const pulse = await reply.json();
        failures = 0;
        if (stopped) return;
        if (data === drawn) {
          last = pulse;
          heard(pulse);
          // held until a change or HOLD_MS: ask again at once; answered at once with
          // nothing new (the server holds no more): every `every_ms`, as before
          if (hold && (differs(pulse, data.seen, data.watch) || performance.now() - began > HOLD_MS / 2))
            wait = 0;
        } else wait = 0; // drawn again meanwhile: read for the new drawing
      } catch (err) {
        if (data !== drawn && err?.name === "AbortError") {
          wait = 0; // drawn again: the held read was for the old drawing
        } else {
          failures += 1;
          wait = Math.min(data.every_ms * 2 ** failures, MAX_WAIT_MS);
          if (failures === FAILURES && told === "ready") {
            told = "failed";
            setStateValue("status", `failed: ${(err && err.message) || err}`);
          }
        }
      } finally {
        reading = null;
      }
    }
    // a little jitter: a class's devices, redrawn together after Ask, do not stay in step
    if (!stopped) timer = setTimeout(tick, wait * (0.8 + 0.4 * Math.random()));
  }

  /** A pulse read for the data drawn now: say "ready" once, then ask for any change. */
  function heard(pulse) {
    if (told !== "ready") {
      told = "ready";
      setStateValue("status", "ready");
    } else if (differs(pulse, data.seen, data.watch)) {
      const change = JSON.stringify(data.watch.map((name) => pulse[name]));
      const now = performance.now();
      const last = asked.get(view);
      if (asksAgain(last, change, now, idle())) {
        const retried = last?.change === change && now - last.at < RETRIGGER_MS;
        asked.set(view, { change, at: now, retried });
        setTriggerValue("changed", pulse);
      }
    }
  }

  function wake() {
    if (!document.hidden && !stopped && reading === null) {
      clearTimeout(timer);
      timer = setTimeout(tick, 0);
    }
  }

  function stop(gone = !host.isConnected) {
    if (!gone || stopped) return; // still on the page: a newer call's data goes on
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener("visibilitychange", wake);
    loops.delete(host);
  }

  function update(component) {
    const before = data;
    ({ data, setStateValue, setTriggerValue } = component);
    if (told === undefined || data.status) told = data.status; // Python's word, once it has one
    view = `${data.name} ${data.url} ${data.watch.join(",")}`;
    if (before && before !== data) {
      last = null; // judged again against the new drawing
      if (reading) reading.abort(); // a read held for what was drawn before: read again
      else if (!stopped) {
        clearTimeout(timer); // waiting between reads: read for the new drawing now
        timer = setTimeout(tick, 0);
      }
    }
  }

  timer = setTimeout(tick, 0);
  document.addEventListener("visibilitychange", wake);
  return { update, stop: () => stop() };
}
