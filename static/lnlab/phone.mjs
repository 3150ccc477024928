// A student's phone in a live class, drawn by the page (lnlab.ui.classroom.phone; issue 39):
// the question asked now, its options to tap, the wait for the reveal, the feedback and the
// score. The page reads the class's board from the pulse route, held until it changes
// (lnlab.ui.server.waiting), and draws what it reads; a tap goes to the answer route
// (lnlab.ui.server.answers), which stores it and says what to draw. No script runs for either:
// Python draws this component when the student joins or reloads, and again only when the
// class has ended (a trigger: the end screen is Python's) or this page cannot go on
// ("failed: ...": Python's own view takes over, on its timer).
//
// The score: Python's at the last draw, or the answer route's at the last tap, counts the
// questions revealed then (lnlab.classroom.store.score); when the question this phone answered
// is revealed, the page adds it. A phone that missed that reveal asks the route again.

const FAILURES = 5;
const MAX_WAIT_MS = 10000;
const HOLD_MS = 20000; // the server answers a held read within this
const READ_TIMEOUT_MS = 10000;
const WATCH = ["qid", "revealed", "open"];

const phones = new WeakMap(); // the component's element -> its phone

/** What the phone shows, from a board's question and this student's answer (`mine`, the
 * option's text or null): "options" (to tap), "sent" (answered, not revealed), "revealed"
 * (with the student's own result), "waiting" (no question yet). */
export function stage(question, mine) {
  if (!question) return "waiting";
  if (question.revealed) return "revealed";
  return mine === null || mine === undefined ? "options" : "sent";
}

/** The score once `question` is revealed, for a phone whose score `score` ({right, answered})
 * did not count its answer `pending` ({qid, mine}) yet: null when it is not this question's. */
export function scored(score, pending, question) {
  if (!pending || !question?.revealed || pending.qid !== question.qid) return null;
  const picked = question.options.indexOf(pending.mine);
  const right = picked >= 0 && question.right.includes(picked);
  return { right: score.right + (right ? 1 : 0), answered: score.answered + 1 };
}

/** The words a screen reader hears when the phone shows `question` at its `stage`. */
export function news(question, mine, where) {
  if (where === "waiting") return "Waiting for the teacher's first question.";
  if (where === "options")
    return `New question: ${question.prompt}` + (question.data ? ` With: ${question.data}` : "");
  if (where === "sent") return `Your answer: ${mine}. Waiting for the reveal.`;
  const answer = `The answer: ${rights(question).join(", ")}.`;
  const picked = question.options.indexOf(mine);
  if (picked < 0) return `${answer} You did not answer this one.`;
  return `${answer} You answered ${mine}: ${question.right.includes(picked) ? "right" : "not right"}.`;
}

function rights(question) {
  return question.right.map((k) => question.options[k]);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "text") node.textContent = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

/** A question's data ("Token 1: t1 · x = (2, 4, 6, 8) · D = 4"), each part whole on a line. */
function dataLine(data) {
  const parts = data.split(" · ");
  const spans = parts.map((part, k) => el("span", { text: part + (k < parts.length - 1 ? " ·" : "") }));
  return el("p", { class: "lnlab-live-data" }, ...spans.flatMap((span, k) => (k ? [" ", span] : [span])));
}

export default function (component) {
  const host = component.parentElement ?? {};
  let phone = phones.get(host);
  if (!phone) {
    phone = mount(host);
    if (component.parentElement) phones.set(host, phone);
  }
  phone.update(component);
  return phone.stop;
}

function mount(host) {
  let data, setStateValue, setTriggerValue;
  let question = null;
  let mine = null;
  let score = { right: 0, answered: 0 };
  let pending = null; // {qid, mine}: this phone's answer, not in `score` until revealed
  let problem = "";
  let told = "";
  let failures = 0;
  let timer = null;
  let reading = null;
  let stopped = false;
  let tapping = false;
  let drawn = ""; // what the view shows now: only a change redraws it
  let applied = null; // the stamp of Python's last draw applied

  const root = el("div", { class: "lnlab-phone", "data-testid": "lnlabPhone" });
  const say = el("div", { class: "lnlab-sr-only", role: "status", "aria-live": "polite" });
  const view = el("div", { class: "lnlab-phone-view", tabindex: "-1" });
  root.append(say, view);
  host.append?.(root);
  // drawn where Python's view was (the browser has just said it reads pulses): a focus that
  // was on that view went with it, to nowhere; it comes to this one
  let landed = false;

  function update(component) {
    ({ data, setStateValue, setTriggerValue } = component);
    if (told === "") told = data.status || "";
    const now = data.now;
    if (now.stamp !== applied) {
      // a new draw from Python: what it read is the truth from here on
      applied = now.stamp;
      question = now.question;
      mine = now.mine;
      score = { right: now.right, answered: now.answered };
      pending = question && !question.revealed && mine !== null ? { qid: question.qid, mine } : null;
      problem = now.problem || "";
      draw(false);
      if (!landed && (!document.activeElement || document.activeElement === document.body)) {
        view.focus({ preventScroll: true });
      }
      landed = true;
      clearTimeout(timer);
      reading?.abort();
      timer = setTimeout(tick, 0);
    }
  }

  /** Redraw what changed; `speak`: tell the screen reader (a change the student did not make). */
  function draw(speak) {
    const where = stage(question, mine);
    const shown = [question?.qid, question?.revealed, where, mine, score, problem, tapping];
    const key = JSON.stringify(shown);
    if (key === drawn) return;
    drawn = key;
    const hadFocus = root.contains(document.activeElement);
    view.replaceChildren(...body(where));
    view.dataset.stage = where;
    if (speak) tell(news(question, mine, where));
    if (hadFocus && !root.contains(document.activeElement)) view.focus();
  }

  function body(where) {
    const parts = [];
    if (problem) parts.push(callout("error", problem, { role: "alert" }));
    if (where === "waiting") {
      parts.push(callout("info", "Waiting for the teacher's first question…"));
    } else {
      if (question.data) parts.push(dataLine(question.data));
      parts.push(el("h2", { class: "lnlab-phone-prompt", text: question.prompt }));
      if (where === "options") parts.push(options());
      else if (where === "sent") parts.push(callout("info", `Your answer: ${mine}. Waiting for the reveal…`));
      else parts.push(...result());
    }
    const value = `${score.right} / ${score.answered}`;
    const help = "Right answers / answers, over the questions revealed so far";
    parts.push(
      el(
        "div",
        { class: "lnlab-phone-score", title: help },
        el("div", { class: "lnlab-phone-score-label", text: "Your score" }),
        el("div", { class: "lnlab-phone-score-value", text: value }),
      ),
    );
    return parts;
  }

  /** The options as big numbered buttons: a tap sends the option's place. */
  function options() {
    const group = el("div", { class: "lnlab-phone-options", role: "group", "aria-label": "Options" });
    question.options.forEach((text, k) => {
      const button = el("button", { type: "button", class: "lnlab-phone-option" });
      const number = el("span", { class: "lnlab-phone-number", text: String(k + 1) });
      button.append(number, el("span", { text }));
      button.disabled = tapping;
      button.addEventListener("click", () => tap(k));
      group.append(button);
    });
    return group;
  }

  /** The revealed answer, and this student's own result with its feedback. */
  function result() {
    const answer = el("p", { class: "lnlab-phone-answer", text: `The answer: ${rights(question).join(", ")}` });
    const picked = question.options.indexOf(mine);
    const feedback = question.feedback[picked];
    if (picked < 0) {
      const text = `You did not answer this one before the reveal. ${question.explanation}`;
      return [answer, callout("info", text.trim())];
    }
    if (question.right.includes(picked)) return [answer, callout("success", `You answered ${mine}: ${feedback}`)];
    return [answer, callout("warning", `You answered ${mine}. ${feedback}`.trim())];
  }

  /** Say `text` in the page's live region (lnlab.ui.assist's, emptied first so that a screen
   * reader hears it again), or this phone's own where the page has none. */
  function tell(text) {
    const region = document.getElementById("lnlab-status") || say;
    region.textContent = "";
    requestAnimationFrame(() => {
      region.textContent = text;
    });
  }

  function callout(kind, text, attrs = {}) {
    return el("div", { class: "lnlab-phone-callout", "data-kind": kind, text, ...attrs });
  }

  /** A board read: the held read's answer, or the first read after a draw. */
  function heard(board) {
    if (!board.open) {
      stop(true);
      setTriggerValue("ended", true); // the end screen is Python's
      return;
    }
    const next = board.question;
    const before = question;
    if (next && before && next.qid !== before.qid && pending && pending.qid === before.qid) {
      refresh(); // this phone's answer was revealed between two reads: ask for the score
    }
    const counted = scored(score, pending, next);
    if (counted) {
      score = counted;
      pending = null;
    }
    if (!next || !before || next.qid !== before.qid) {
      mine = null; // a new question: the answer route says if this student answered it before
      problem = "";
    }
    question = next;
    const changed = !before || !next || before.qid !== next.qid || before.revealed !== next.revealed;
    draw(changed);
  }

  async function tick() {
    if (stopped) return;
    if (host.isConnected === false) return stop(true);
    let wait = 0;
    if (!document.hidden) {
      const seen = { qid: question?.qid ?? null, revealed: question?.revealed ?? false, open: true };
      const hold = told === "ready";
      const since = encodeURIComponent(JSON.stringify(WATCH.map((name) => seen[name])));
      const url = `${data.url}?question=1` + (hold ? `&watch=${WATCH.join(",")}&since=${since}` : "");
      const read = new AbortController();
      reading = read;
      const began = performance.now();
      try {
        const limit = AbortSignal.timeout(READ_TIMEOUT_MS + (hold ? HOLD_MS : 0));
        const reply = await fetch(url, {
          cache: "no-store",
          credentials: "same-origin",
          signal: AbortSignal.any ? AbortSignal.any([limit, read.signal]) : limit,
        });
        if (!reply.ok) throw new Error(`the server answered ${reply.status}`);
        const board = await reply.json();
        failures = 0;
        if (stopped) return;
        if (told !== "ready") {
          told = "ready";
          setStateValue("status", "ready");
        }
        const same =
          board.open &&
          (board.question?.qid ?? null) === (question?.qid ?? null) &&
          (board.question?.revealed ?? false) === (question?.revealed ?? false);
        heard(board);
        // answered at once with nothing new (the server held it not): not every frame
        if (hold && same && performance.now() - began < HOLD_MS / 2) wait = data.every_ms;
      } catch (err) {
        if (read.signal.aborted) return; // drawn again by Python (or gone): a new read runs
        failures += 1;
        wait = Math.min(data.every_ms * 2 ** failures, MAX_WAIT_MS);
        if (failures === FAILURES) {
          setStateValue("status", `failed: ${(err && err.message) || err}`);
        }
      } finally {
        if (reading === read) reading = null;
      }
    } else wait = data.every_ms;
    if (!stopped) timer = setTimeout(tick, wait * (0.8 + 0.4 * Math.random()));
  }

  /** Ask the answer route what this student has (a tap when `option` is a number). */
  async function post(body) {
    const reply = await fetch(data.answer_url, {
      method: "POST",
      cache: "no-store",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ me: data.me, ...body }),
      signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    });
    const answer = await reply.json().catch(() => ({}));
    return { status: reply.status, answer };
  }

  function took(answer) {
    if (answer.qid !== (question?.qid ?? null)) return; // another question by now: its read draws it
    mine = answer.mine;
    score = { right: answer.right, answered: answer.answered };
    pending = question && !question.revealed && mine !== null ? { qid: question.qid, mine } : null;
  }

  async function tap(k) {
    if (tapping || !question) return;
    const asked = question;
    tapping = true;
    problem = "";
    draw(false);
    try {
      const { status, answer } = await post({ qid: asked.qid, option: k });
      if (status === 200 && answer.stored === true) {
        if (question?.qid === asked.qid) {
          mine = asked.options[k]; // stored: the score is as it was until the reveal
          pending = question.revealed ? null : { qid: asked.qid, mine };
        }
      } else if (status === 200) {
        took(answer);
      } else if (status === 409 || status === 429) {
        problem = answer.error ? answer.error[0].toUpperCase() + answer.error.slice(1) + "." : "";
      } else {
        throw new Error(`the server answered ${status}`);
      }
    } catch {
      // the route cannot take it: the tap goes to Python, as a phone drawn by Python sends it
      setTriggerValue("tap", { qid: asked.qid, option: k });
    } finally {
      tapping = false;
      draw(false);
      if (stage(question, mine) === "sent") tell(news(question, mine, "sent"));
      view.focus();
    }
  }

  async function refresh() {
    try {
      const { status, answer } = await post({});
      if (status === 200 && !stopped) {
        took(answer);
        draw(false);
      }
    } catch {
      // the next draw by Python sets the score right
    }
  }

  function wake() {
    if (!document.hidden && !stopped && reading === null) {
      clearTimeout(timer);
      timer = setTimeout(tick, 0);
    }
  }

  function stop(gone = !host.isConnected) {
    if (!gone || stopped) return;
    stopped = true;
    clearTimeout(timer);
    reading?.abort();
    document.removeEventListener("visibilitychange", wake);
    phones.delete(host);
  }

  document.addEventListener("visibilitychange", wake);
  return { update, stop: () => stop() };
}
