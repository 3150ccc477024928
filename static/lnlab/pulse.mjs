// A live class's device follows the class by its pulse (lnlab.ui.pulse): every `every_ms` it
// asks the server for the class's pulse, a few bytes of JSON that no script run makes, and
// reruns its fragment (a trigger) only when a field it watches differs from what the fragment
// drew. The first pulse read tells Python that this browser can ("ready"); FAILURES in a row
// after that tell it that it cannot ("failed: ..."), and the fragment goes back to its timer.

const FAILURES = 5;
const RETRIGGER_MS = 3000; // a change still unseen this long after a trigger is sent again
const MAX_WAIT_MS = 10000;
const READ_TIMEOUT_MS = 10000; // a read that hangs (a dead connection, a sleeping laptop) fails

// What each view last asked Python to redraw for, and when: a view may be drawn again (with
// what it drew before) while its rerun runs, and must not ask twice for the same change.
const asked = new Map();

export function differs(pulse, seen, fields) {
  if (!seen) return true;
  return fields.some((name) => pulse[name] !== seen[name]);
}

export default function (component) {
  const { data, setStateValue, setTriggerValue } = component;
  let told = data.status;
  let failures = 0;
  const view = `${data.url} ${data.watch.join(",")}`;
  let timer = null;
  let stopped = false;
  let reading = false;

  async function tick() {
    if (stopped) return;
    let wait = data.every_ms;
    if (!document.hidden) {
      reading = true;
      try {
        const reply = await fetch(data.url, {
          cache: "no-store",
          credentials: "same-origin",
          signal: AbortSignal.timeout(READ_TIMEOUT_MS),
        });
        if (!reply.ok) throw new Error(`the server answered ${reply.status}`);
        const pulse = await reply.json();
        failures = 0;
        if (stopped) return;
        if (told !== "ready") {
          told = "ready";
          setStateValue("status", "ready");
        } else if (differs(pulse, data.seen, data.watch)) {
          const change = JSON.stringify(data.watch.map((name) => pulse[name]));
          const last = asked.get(view);
          const now = performance.now();
          if (!last || last.change !== change || now - last.at >= RETRIGGER_MS) {
            asked.set(view, { change, at: now });
            setTriggerValue("changed", pulse);
          }
        }
      } catch (err) {
        failures += 1;
        wait = Math.min(data.every_ms * 2 ** failures, MAX_WAIT_MS);
        if (failures === FAILURES && told === "ready") {
          told = "failed";
          setStateValue("status", `failed: ${(err && err.message) || err}`);
        }
      } finally {
        reading = false;
      }
    }
    // a little jitter: a class's devices, redrawn together after Ask, do not stay in step
    if (!stopped) timer = setTimeout(tick, wait * (0.8 + 0.4 * Math.random()));
  }

  function wake() {
    if (!document.hidden && !stopped && !reading) {
      clearTimeout(timer);
      timer = setTimeout(tick, 0);
    }
  }

  timer = setTimeout(tick, 0);
  document.addEventListener("visibilitychange", wake);
  return () => {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener("visibilitychange", wake);
  };
}
