"""An instant class (issue 39): the question on every phone, the taps on the teacher's count.

Run: `.venv/bin/python -m bench.class_instant` (`--phase browser|one|cluster|all`, `--students N`
or a list `300,1000`, `--processes 2,4`). Three phases, each printing its tables and appending
them to bench/results/class_instant.md:

1. browser: 12 phones in Chromium (390 x 844, each a browser context with its own student
   cookie, joined through the store beforehand) on one app process (`streamlit run app.py`,
   SQLite), and the teacher's Class page (1024 x 768, the teacher's cookie claim). Each page
   notes on its own clock (Date.now(), the machine's clock, as time.time() here) when each
   question's heading enters the page, when the reveal's answer does, each tap's click, and the
   teacher's "k of N answered" as it changes (a MutationObserver added before the page loads).
   5 questions: the bench asks them through the store as the teacher's Ask does (time.time()
   just before), each phone taps an option, then the bench reveals. The phones' script runs in
   that time are counted from their websockets (issue 39: none per device).
2. one: N simulated phones (300; harness.phones: HTTP only, the page's own protocol) in one
   class on one app process (SQLite): idle with every phone's read held, then 5 questions.
3. cluster: N simulated phones (2,000) in one class through HAProxy (lnlab.serving.cluster) in
   front of 2 and 4 app processes, the class store in PostgreSQL (tests/db.py, fsync on).

For the simulated phases: Ask -> each phone read the question (p50/p95/max over phones and
questions), a tap's round trip, the last tap -> the teacher's held pulse read the full count,
Reveal -> each phone read the answer, answers lost (taps stored against the store's count), the
CPU per second of every process while asking (the client's too: it runs on the same 2 cores),
the app processes' memory before and with the phones, and per 100 students.

Every time is measured, never asserted: other work shares this machine (the load average is
in each record).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.report import load_average, record
from harness.phones import (
    Agent,
    Counters,
    LoopLag,
    Phone,
    TeacherCount,
    process_cpu,
    tree_cpu,
    tree_rss_mib,
)
from harness.stats import percentile
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.store import ClassStore, Limits, NewClass

SEED = 39
BROWSER_PHONES = 12
ONE_STUDENTS = 300
CLUSTER_STUDENTS = 2000
CLUSTER_PROCESSES = (2, 4)
IDLE_S = 20.0  # a held read is answered after 20 s: each phone asks again once
TAP_SPREAD_S = 3.0  # the taps of a question come over this long
BROWSER_TAP_SPREAD_S = 2.0
GAP_S = 2.0  # between a reveal and the next Ask (a phone waits ~1 s after each change)
WAIT_S = 30.0  # for every device to show a change
DRAIN_S = 120.0  # for the store to take every tap sent
DRAIN_QUIET_S = 5.0  # ... or until its count stands still this long
OPENING = 200  # simulated phones starting at once
PHONE_LOAD_MS = 180_000
# The per-address limits the cluster gets: every simulated phone comes from 127.0.0.1, one
# address, each with up to 2 keep-alive connections (a held read and a tap) and about 4
# requests a question; the defaults are sized for a class of 60 behind one router
# (1,000 open connections, 1,500 new ones and 20,000 requests in 10 s).
CLUSTER_LIMITS = dict(
    requests_per_10s=1_000_000, connections_per_10s=100_000, max_open_per_client=20_000
)


def _questions() -> list[LiveQuestion]:
    """5 questions, each with its own prompt (the pages tell them apart by it)."""
    made = []
    for k in range(5):
        xs = [2 * (k + 1) * j for j in range(1, 5)]
        mean = sum(xs) / 4
        made.append(
            LiveQuestion(
                qid=f"instant-{k + 1}-{secrets.token_hex(3)}",
                page="bench",
                prompt=f"Question {k + 1}: what is the mean of {', '.join(map(str, xs))}?",
                options=(
                    LiveOption(f"{mean:g}", "right", "Yes: the sum over the count."),
                    LiveOption(f"{sum(xs) / 3:g}", "n-1", "That divides by n - 1."),
                    LiveOption(f"{sum(xs):g}", "sum", "That is the sum."),
                ),
                explanation="The sum over the count.",
                data=f"x = ({', '.join(map(str, xs))}) · D = 4",
            )
        )
    return made


def spread(samples: Sequence[float], digits: int = 2, scale: float = 1.0) -> str:
    if not samples:
        return "-"
    p50, p95 = percentile(samples, 0.5) * scale, percentile(samples, 0.95) * scale
    return f"{p50:.{digits}f} / {p95:.{digits}f} (max {max(samples) * scale:.{digits}f})"


def client_cpu() -> float:
    """This process's CPU seconds (every thread)."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


async def until_true(check: Callable[[], bool], timeout_s: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


# ================================================================= phase 1: Chromium

PAGE_JS = """(() => {
  const seen = (window.__lnlabInstant = { asked: {}, revealed: {}, clicks: [], counts: [] });
  let lastCount = "";
  const look = () => {
    const now = Date.now();
    for (const h of document.querySelectorAll(".lnlab-phone-prompt")) {
      const text = h.textContent;
      if (!(text in seen.asked)) seen.asked[text] = now;
      const view = h.closest(".lnlab-phone-view");
      if (view && view.querySelector(".lnlab-phone-answer") && !(text in seen.revealed))
        seen.revealed[text] = now;
    }
    const panel = document.querySelector('[class*="st-key-live_panel"]');
    const found = panel && panel.textContent.match(/(\\d+) of (\\d+)\\s*answered/);
    if (found && found[0] !== lastCount) {
      lastCount = found[0];
      seen.counts.push([now, Number(found[1]), Number(found[2])]);
    }
  };
  const all = { subtree: true, childList: true, characterData: true };
  new MutationObserver(look).observe(document, all);
  document.addEventListener("click", (event) => {
    const option = event.target.closest && event.target.closest(".lnlab-phone-option");
    if (option) seen.clicks.push(Date.now());
  }, true);
})();"""


@dataclass
class BrowserResult:
    phones: int
    open_s: float = 0.0
    asked_s: list[float] = field(default_factory=list)
    counted_s: list[float] = field(default_factory=list)
    revealed_s: list[float] = field(default_factory=list)
    taps: int = 0
    stored: int = 0
    lost: int = 0
    missing: int = 0  # a page that never showed a change within WAIT_S
    phone_runs: int = 0  # script runs the phones asked for during the questions
    server_cpu: float = 0.0
    browser_cpu: float = 0.0
    questions_s: float = 0.0


async def measure_browser(phones: int) -> BrowserResult:
    from playwright.async_api import async_playwright
    from streamlit.proto.BackMsg_pb2 import BackMsg

    from bench.browser import serve
    from harness import chromium
    from harness.sessions import LNLAB

    result = BrowserResult(phones)
    folder = Path(tempfile.mkdtemp(prefix="lnlab-instant-"))
    url = f"sqlite:///{folder / 'classes.db'}"
    os.environ["LNLAB_DATABASE_URL"] = url
    store = ClassStore(url, limits=Limits(students=max(200, phones), joins_per_address=10**6))
    new = store.open_class()
    browsers = [secrets.token_urlsafe(18) for _ in range(phones)]
    for browser_id in browsers:
        store.join(new.code, browser=browser_id)
    runs = [0] * phones
    counting = [False]

    def counter(k: int):
        def sent(payload: str | bytes) -> None:
            if counting[0] and isinstance(payload, bytes):
                msg = BackMsg()
                msg.ParseFromString(payload)
                runs[k] += msg.WhichOneof("type") == "rerun_script"

        return sent

    async with serve(LNLAB) as server, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium.EXECUTABLE, args=chromium.ARGS)
        try:
            started = time.perf_counter()
            teacher_context = await browser.new_context(viewport={"width": 1024, "height": 768})
            await teacher_context.add_cookies(
                [
                    {
                        "name": "lnlab_teacher",
                        "value": f"{new.code}.{new.teacher_secret}",
                        "url": server.url,
                    }
                ]
            )
            await teacher_context.add_init_script(PAGE_JS)
            teacher = await teacher_context.new_page()
            await teacher.goto(server.url + "/class", timeout=PHONE_LOAD_MS)
            await teacher.get_by_text("No question asked yet").wait_for(timeout=PHONE_LOAD_MS)
            pages = []
            for k, browser_id in enumerate(browsers):
                context = await browser.new_context(viewport={"width": 390, "height": 844})
                await context.add_cookies(
                    [{"name": "lnlab_browser", "value": browser_id, "url": server.url}]
                )
                await context.add_init_script(PAGE_JS)
                page = await context.new_page()
                page.on("websocket", lambda ws, k=k: ws.on("framesent", counter(k)))
                pages.append(page)

            async def opened(page) -> None:
                await page.goto(f"{server.url}/class?join={new.code}", timeout=PHONE_LOAD_MS)
                phone = page.locator('[data-testid="lnlabPhone"]')
                await phone.wait_for(state="visible", timeout=PHONE_LOAD_MS)
                await page.get_by_text("Waiting for the teacher's first question").wait_for(
                    timeout=PHONE_LOAD_MS
                )

            for k in range(0, phones, 3):  # 3 at a time: the 2 cores also run the server
                await asyncio.gather(*(opened(p) for p in pages[k : k + 3]))
            await asyncio.sleep(3.0)  # each page's "ready" run, and its first held read
            result.open_s = time.perf_counter() - started
            print(f"  {phones} phones and the teacher open in {result.open_s:.0f} s", flush=True)

            pid = server.process.pid
            mine = os.getpid()
            cpu_server = tree_cpu(pid)
            cpu_browsers = tree_cpu(mine) - cpu_server - client_cpu()
            began = time.perf_counter()
            counting[0] = True
            for question in _questions():
                asked = time.time() * 1e3
                await asyncio.to_thread(store.pose, new.code, new.teacher_secret, question)
                shown = await _page_times(pages, "asked", question.prompt)
                result.asked_s += [(t - asked) / 1e3 for t in shown if t is not None]
                result.missing += sum(t is None for t in shown)

                async def tap(page, question=question) -> None:
                    await asyncio.sleep(random.uniform(0, BROWSER_TAP_SPREAD_S))
                    k = random.randrange(len(question.options))
                    await page.locator(".lnlab-phone-option").nth(k).click(timeout=WAIT_S * 1e3)
                    await page.locator('.lnlab-phone-view[data-stage="sent"]').wait_for(
                        timeout=WAIT_S * 1e3
                    )

                await asyncio.gather(*(tap(p) for p in pages))
                result.taps += phones
                clicks = [await p.evaluate("window.__lnlabInstant.clicks.at(-1)") for p in pages]
                last = max(clicks)
                tally = await asyncio.to_thread(
                    store.tally, new.code, new.teacher_secret, question.qid
                )
                result.stored += tally.answered
                result.lost += phones - tally.answered
                deadline = time.monotonic() + WAIT_S
                counted = None
                while counted is None and time.monotonic() < deadline:
                    counts = await teacher.evaluate("window.__lnlabInstant.counts")
                    counted = next(
                        (t for t, k, n in counts if t >= last and k >= tally.answered), None
                    )
                    await asyncio.sleep(0.05)
                if counted is None:
                    result.missing += 1
                    late = [(round((t - last) / 1e3, 2), k) for t, k, n in counts[-6:]]
                    print(f"  the teacher's screen never counted {tally.answered}: {late}")
                else:
                    result.counted_s.append((counted - last) / 1e3)
                await asyncio.sleep(GAP_S / 2)
                revealed = time.time() * 1e3
                await asyncio.to_thread(store.reveal, new.code, new.teacher_secret, question.qid)
                shown = await _page_times(pages, "revealed", question.prompt)
                result.revealed_s += [(t - revealed) / 1e3 for t in shown if t is not None]
                result.missing += sum(t is None for t in shown)
                print(
                    f"  {question.qid}: Ask max {max(result.asked_s[-phones:]):.2f} s, "
                    f"count {(counted - last) / 1e3 if counted else None} s, reveal max "
                    f"{max(result.revealed_s[-phones:]):.2f} s",
                    flush=True,
                )
                await asyncio.sleep(GAP_S)
            counting[0] = False
            result.questions_s = time.perf_counter() - began
            result.server_cpu = (tree_cpu(pid) - cpu_server) / result.questions_s
            browsers_now = tree_cpu(mine) - tree_cpu(pid) - client_cpu()
            result.browser_cpu = (browsers_now - cpu_browsers) / result.questions_s
            result.phone_runs = sum(runs)
        finally:
            await browser.close()
    store.close()
    return result


async def _page_times(pages, kind: str, prompt: str) -> list[float | None]:
    """When each page showed `prompt` `kind` ("asked" or "revealed"), Date.now() ms; None for a
    page that did not within WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    times: list[float | None] = [None] * len(pages)
    js = f"(p) => window.__lnlabInstant.{kind}[p] ?? null"
    while time.monotonic() < deadline:
        for k, page in enumerate(pages):
            if times[k] is None:
                times[k] = await page.evaluate(js, prompt)
        if all(t is not None for t in times):
            break
        await asyncio.sleep(0.1)
    return times


def browser_rows(r: BrowserResult) -> list[tuple[str, ...]]:
    header = (
        "phones in Chromium, 1 process",
        "Ask -> each phone shows it, s p50 / p95 (max)",
        "last tap -> teacher's screen counts all, s p50 / p95 (max)",
        "Reveal -> each phone shows it, s p50 / p95 (max)",
        "answers lost (taps - stored)",
        "pages late > 30 s",
        "phone script runs, 5 questions",
        "server CPU s/s",
        "Chromium CPU s/s",
    )
    return [
        header,
        (
            str(r.phones),
            spread(r.asked_s),
            spread(r.counted_s),
            spread(r.revealed_s),
            f"{r.lost} ({r.taps} - {r.stored})",
            str(r.missing),
            str(r.phone_runs),
            f"{r.server_cpu:.2f}",
            f"{r.browser_cpu:.2f}",
        ),
    ]


# ================================================================= phases 2 and 3: simulated


@dataclass
class SimResult:
    label: str
    students: int
    processes: int
    open_s: float = 0.0
    idle_cpu: dict[str, float] = field(default_factory=dict)  # by process kind, s/s
    idle_requests: float = 0.0  # per second
    busy_cpu: dict[str, float] = field(default_factory=dict)
    asked_s: list[float] = field(default_factory=list)
    asked_p95_by_question: list[float] = field(default_factory=list)
    tap_ms: list[float] = field(default_factory=list)
    counted_s: list[float] = field(default_factory=list)
    revealed_s: list[float] = field(default_factory=list)
    tap_spread_s: float = 0.0
    taps: int = 0
    acknowledged: int = 0  # answered 200 "stored" within the page's 10 s
    timed_out: int = 0  # no answer within 10 s: the page sends the tap by its script instead
    counted: int = 0  # the store's count once the taps drained, all questions
    missing: int = 0
    read_errors: int = 0
    rss_before_mib: float = 0.0
    rss_with_mib: float = 0.0
    connections: int = 0
    retried: int = 0
    closed_new: int = 0
    lag_ms: list[float] = field(default_factory=list)
    ask_cpu_ms: list[float] = field(default_factory=list)  # app CPU per phone, Ask to all shown
    tap_cpu_ms: list[float] = field(default_factory=list)  # per tap, first tap to all counted
    questions_s: float = 0.0


async def simulate(
    result: SimResult,
    host: str,
    port: int,
    store: ClassStore,
    new: NewClass,
    ids: Sequence[str],
    roots: dict[str, list[int]],
    poll_ms: float | None = None,
) -> None:
    """Phones `ids` of class `new` and its teacher's count, through `host:port`; the CPU of
    each kind of process in `roots` (and "client": this one). `poll_ms`: the phones read every
    poll_ms, each read answered at once, instead of holding each read until the class changes."""
    app_roots = roots["app"]

    def cpu() -> dict[str, float]:
        found = {kind: sum(tree_cpu(p) for p in pids) for kind, pids in roots.items()}
        found["client"] = client_cpu()
        return found

    def app_cpu() -> float:  # the app processes alone, cheaply (no walk through /proc)
        return sum(process_cpu(p) for p in app_roots)

    def per_second(before: dict[str, float], after: dict[str, float], s: float):
        return {kind: (after[kind] - before[kind]) / s for kind in before}

    counters = Counters()
    result.rss_before_mib = sum(tree_rss_mib(p) for p in app_roots)
    reads = {} if poll_ms is None else {"every_ms": poll_ms, "hold": False}
    phones = [Phone(Agent(host, port, counters), new.code, me, **reads) for me in ids]
    teacher = TeacherCount(Agent(host, port, counters), new.code)
    until = asyncio.Event()
    lag = LoopLag()
    lag.start()
    started = time.perf_counter()
    tasks = [asyncio.ensure_future(teacher.follow(until))]
    for k in range(0, len(phones), OPENING):
        tasks += [asyncio.ensure_future(p.follow(until)) for p in phones[k : k + OPENING]]
        await asyncio.sleep(0.3)
    if not await until_true(lambda: all(p.reads for p in phones), 120):
        slow = sum(not p.reads for p in phones)
        raise RuntimeError(f"{slow} phones never read the board: {_errors(phones)}")
    await asyncio.sleep(2.0)  # every phone's read held
    result.open_s = time.perf_counter() - started
    print(f"  {len(phones)} phones reading in {result.open_s:.1f} s", flush=True)

    before, requests, began = cpu(), counters.requests, time.perf_counter()
    await asyncio.sleep(IDLE_S)
    elapsed = time.perf_counter() - began
    result.idle_cpu = per_second(before, cpu(), elapsed)
    result.idle_requests = (counters.requests - requests) / elapsed
    result.rss_with_mib = sum(tree_rss_mib(p) for p in app_roots)

    before, began = cpu(), time.perf_counter()
    lag.lags_ms.clear()
    for question in _questions():
        spent = app_cpu()
        asked = time.time()
        await asyncio.to_thread(store.pose, new.code, new.teacher_secret, question)
        key = (question.qid, "asked")
        if not await until_true(lambda key=key: all(key in p.shown for p in phones)):
            result.missing += sum(key not in p.shown for p in phones)
        result.ask_cpu_ms.append((app_cpu() - spent) * 1e3 / len(phones))
        got = [p.shown[key] - asked for p in phones if key in p.shown]
        result.asked_s += got
        result.asked_p95_by_question.append(percentile(got, 0.95))

        async def tap(phone: Phone, question=question):
            await asyncio.sleep(random.uniform(0, result.tap_spread_s))
            return await phone.tap(random.randrange(len(question.options)))

        spent = app_cpu()
        taps = [t for t in await asyncio.gather(*(tap(p) for p in phones)) if t is not None]
        acknowledged = sum(t.stored is True for t in taps)
        result.taps += len(taps)
        result.acknowledged += acknowledged
        result.timed_out += sum(t.status == 0 for t in taps)
        result.tap_ms += [t.ms for t in taps if t.status]
        last = max((t.sent for t in taps), default=time.time())
        # taps the phones gave up on (the page's 10 s) may still be stored: the teacher waits
        # until the store's count has not moved for DRAIN_QUIET_S (or all are in)
        tally = await _drained(store, new, question.qid, len(taps))
        counted = tally.answered
        result.counted += counted
        if await until_true(lambda q=question.qid, n=counted, t=last: teacher.counted(q, n, t)):
            result.counted_s.append(teacher.counted(question.qid, counted, last) - last)
        else:
            result.missing += 1
        result.tap_cpu_ms.append((app_cpu() - spent) * 1e3 / max(1, len(taps)))
        await asyncio.sleep(GAP_S / 2)
        revealed = time.time()
        await asyncio.to_thread(store.reveal, new.code, new.teacher_secret, question.qid)
        key = (question.qid, "revealed")
        if not await until_true(lambda key=key: all(key in p.shown for p in phones)):
            result.missing += sum(key not in p.shown for p in phones)
        result.revealed_s += [p.shown[key] - revealed for p in phones if key in p.shown]
        print(
            f"  {question.qid}: Ask p95 {result.asked_p95_by_question[-1]:.2f} s, "
            f"{acknowledged}/{len(taps)} taps acknowledged, the store counts {counted}",
            flush=True,
        )
        await asyncio.sleep(GAP_S)
    result.lag_ms = list(lag.lags_ms)
    result.questions_s = time.perf_counter() - began
    result.busy_cpu = per_second(before, cpu(), result.questions_s)
    lag.stop()
    until.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for p in phones:
        p.agent.close()
    teacher.agent.close()
    result.read_errors = sum(e.startswith("read") for p in phones for e in p.errors)
    result.read_errors += len(teacher.errors)
    result.connections, result.retried = counters.connections, counters.retried
    result.closed_new = counters.closed_new
    if result.read_errors or result.timed_out or result.taps != result.acknowledged:
        print(f"  errors: {_errors(phones) or teacher.errors[:3]}", flush=True)


async def _drained(store: ClassStore, new: NewClass, qid: str, taps: int):
    """The store's tally of `qid` once every tap is in or its count has stood still for
    DRAIN_QUIET_S (DRAIN_S at most)."""
    deadline = time.monotonic() + DRAIN_S
    tally = await asyncio.to_thread(store.tally, new.code, new.teacher_secret, qid)
    still = time.monotonic()
    while tally.answered < taps and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        now = await asyncio.to_thread(store.tally, new.code, new.teacher_secret, qid)
        if now.answered != tally.answered:
            still = time.monotonic()
        elif time.monotonic() - still > DRAIN_QUIET_S:
            break
        tally = now
    return tally


def _errors(phones: Sequence[Phone]) -> list[str]:
    seen: dict[str, int] = {}
    for p in phones:
        for e in p.errors:
            seen[e] = seen.get(e, 0) + 1
    return [f"{n} x {e}" for e, n in sorted(seen.items(), key=lambda x: -x[1])[:5]]


def _join(store: ClassStore, students: int) -> tuple[NewClass, list[str]]:
    new = store.open_class()
    ids = [store.join(new.code, browser=secrets.token_urlsafe(18)) for _ in range(students)]
    return new, ids


def _bench_store(url: str, students: int) -> ClassStore:
    """The bench's own store: a class of `students` (the server's store only reads, stores
    taps and counts: its caps on joining are not met)."""
    return ClassStore(url, limits=Limits(students=max(200, students), joins_per_address=10**6))


async def measure_one(students: int, spread_s: float, poll_ms: float | None = None) -> SimResult:
    from bench.browser import serve
    from harness.sessions import LNLAB

    reads = "held reads" if poll_ms is None else f"a read every {poll_ms:g} ms"
    result = SimResult(f"1 app process, SQLite, {reads}", students, 1, tap_spread_s=spread_s)
    folder = Path(tempfile.mkdtemp(prefix="lnlab-instant-"))
    url = f"sqlite:///{folder / 'classes.db'}"
    os.environ["LNLAB_DATABASE_URL"] = url
    store = _bench_store(url, students)
    new, ids = await asyncio.to_thread(_join, store, students)
    async with serve(LNLAB) as server:
        port = int(server.url.rsplit(":", 1)[1])
        roots = {"app": [server.process.pid]}
        await simulate(result, "127.0.0.1", port, store, new, ids, roots, poll_ms)
    store.close()
    return result


def measure_cluster(
    students: int, processes: int, database_url: str, database_pid: int | None, spread_s: float
) -> SimResult:
    label = f"{processes} app processes + HAProxy, PostgreSQL"
    result = SimResult(label, students, processes, tap_spread_s=spread_s)
    store = _bench_store(database_url, students)
    new, ids = _join(store, students)
    with tempfile.TemporaryDirectory(prefix="lnlab-instant-cluster-") as run_dir:
        started = time.perf_counter()
        cluster = _cluster(processes, database_url, Path(run_dir))
        try:
            print(
                f"  cluster of {processes} up in {time.perf_counter() - started:.0f} s", flush=True
            )
            roots = {
                "app": [a.process.pid for a in cluster.apps if a.process],
                "haproxy": [cluster.proxy.pid] if cluster.proxy else [],
                "postgres": [database_pid] if database_pid else [],
            }
            asyncio.run(simulate(result, "127.0.0.1", cluster.port, store, new, ids, roots))
        finally:
            cluster.stop()
    store.close()
    return result


def _cluster(processes: int, database_url: str, run_dir: Path):
    """`processes` app processes behind HAProxy, started (CLUSTER_LIMITS; on free ports, picked
    again when another user of the machine took one meanwhile)."""
    from lnlab.serving import haproxy
    from lnlab.serving.cluster import Cluster, free_port

    class Patient(Cluster):
        """The cluster, given longer to start: N processes importing torch on 2 shared cores."""

        def _wait_healthy(self, apps, timeout_s: float = 300.0) -> None:
            super()._wait_healthy(apps, max(timeout_s, 300.0))

    for attempt in range(3):
        cluster = Patient(
            processes,
            port=free_port(),
            host="127.0.0.1",
            app_ports=[free_port() for _ in range(processes)],
            limits=haproxy.Limits(**CLUSTER_LIMITS),
            run_dir=run_dir,
            database_url=database_url,
            supervise=False,
        )
        try:
            return cluster.start()
        except RuntimeError as err:
            if "is not available" not in str(err) or attempt == 2:
                raise
            print("  a port was taken meanwhile: again on others", flush=True)
    raise AssertionError("unreachable")


def sim_rows(results: Sequence[SimResult]) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    timing = [
        (
            "students",
            "stack",
            "taps within, s",
            "Ask -> each phone has it, s p50 / p95 (max)",
            "p95 per question, s",
            "a tap's round trip, ms p50 / p95 (max)",
            "last tap -> teacher's count has all, s p50 / p95 (max)",
            "Reveal -> each phone has it, s p50 / p95 (max)",
            "taps lost (sent - stored)",
            "taps acknowledged within 10 s (timed out)",
            "read errors / late",
            "client loop lag ms p95 (max)",
        )
    ]
    load = [
        (
            "students",
            "stack",
            "taps within, s",
            "idle: CPU s/s (app / proxy / db / client)",
            "idle: requests/s",
            "asking: CPU s/s (app / proxy / db / client)",
            "server CPU s/s per 100 students, asking (idle)",
            "app CPU ms per phone reached, Ask / per tap",
            "app RSS MiB: before phones -> with",
            "MiB per 100 students",
            "connections opened (requests sent again / closed unanswered on a new one)",
        )
    ]
    for r in results:
        timing.append(
            (
                str(r.students),
                r.label,
                f"{r.tap_spread_s:g}",
                spread(r.asked_s),
                ", ".join(f"{v:.2f}" for v in r.asked_p95_by_question),
                spread(r.tap_ms, 0),
                spread(r.counted_s),
                spread(r.revealed_s),
                f"{r.taps - r.counted} ({r.taps} - {r.counted})",
                f"{r.acknowledged} ({r.timed_out})",
                f"{r.read_errors} / {r.missing}",
                f"{percentile(r.lag_ms, 0.95):.0f} ({max(r.lag_ms):.0f})" if r.lag_ms else "-",
            )
        )
        server_busy = sum(v for k, v in r.busy_cpu.items() if k != "client")
        server_idle = sum(v for k, v in r.idle_cpu.items() if k != "client")
        load.append(
            (
                str(r.students),
                r.label,
                f"{r.tap_spread_s:g}",
                _kinds(r.idle_cpu),
                f"{r.idle_requests:.0f}",
                _kinds(r.busy_cpu),
                f"{server_busy / r.students * 100:.3f} ({server_idle / r.students * 100:.3f})",
                f"{statistics.median(r.ask_cpu_ms):.2f} / {statistics.median(r.tap_cpu_ms):.1f}"
                if r.ask_cpu_ms and r.tap_cpu_ms
                else "-",
                f"{r.rss_before_mib:.0f} -> {r.rss_with_mib:.0f}",
                f"{(r.rss_with_mib - r.rss_before_mib) / r.students * 100:.1f}",
                f"{r.connections} ({r.retried} / {r.closed_new})",
            )
        )
    return timing, load


def _kinds(cpu: dict[str, float]) -> str:
    return " / ".join(
        f"{cpu[k]:.2f}" if k in cpu else "-" for k in ("app", "haproxy", "postgres", "client")
    )


# ================================================================= main


def _counts(text: str | None, default: Sequence[int]) -> list[int]:
    return [int(n) for n in text.split(",")] if text else list(default)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phase", choices=("browser", "one", "cluster", "all"), default="all")
    parser.add_argument(
        "--students",
        help=f"phones (a list: 300,1000); default {BROWSER_PHONES} in Chromium, "
        f"{ONE_STUDENTS} on one process, {CLUSTER_STUDENTS} through the cluster",
    )
    parser.add_argument(
        "--processes", help="app processes behind HAProxy (a list: 2,4; default 2,4)"
    )
    parser.add_argument(
        "--tap-spread",
        help="simulated phones tap at a random moment within this many seconds of the "
        f"question (a list: 3,20; default {TAP_SPREAD_S:g})",
    )
    parser.add_argument(
        "--poll-ms",
        type=float,
        help="phase one: the phones read the board every this many ms, each read answered at "
        "once (a short poll behind the route's cache), instead of held reads",
    )
    args = parser.parse_args(argv)
    if args.poll_ms is not None and (args.phase != "one" or args.poll_ms <= 0):
        parser.error("--poll-ms: a positive number of ms, with --phase one")
    random.seed(SEED)
    phases = ("browser", "one", "cluster") if args.phase == "all" else (args.phase,)
    spreads = [float(v) for v in args.tap_spread.split(",")] if args.tap_spread else [TAP_SPREAD_S]
    load_before = os.getloadavg()
    if "browser" in phases:
        for phones in _counts(args.students if args.phase == "browser" else None, [BROWSER_PHONES]):
            print(f"{phones} phones in Chromium...", flush=True)
            result = asyncio.run(measure_browser(phones))
            record(
                "class_instant",
                "An instant class: phones in Chromium on one process",
                browser_rows(result),
                notes=_notes(load_before, _browser_note(result)),
            )
    if "one" in phases:
        for students in _counts(args.students if args.phase == "one" else None, [ONE_STUDENTS]):
            for spread_s in spreads:
                print(f"{students} simulated phones on one process...", flush=True)
                result = asyncio.run(measure_one(students, spread_s, args.poll_ms))
                _record_sim("one process", result, load_before)
    if "cluster" in phases:
        from tests.db import postgres_bin, postgres_server

        if (
            postgres_bin() is None
            or not Path(os.environ.get("LNLAB_HAPROXY", "/usr/sbin/haproxy")).exists()
        ):
            print("(the cluster phase needs PostgreSQL and HAProxy: skipped)")
            return
        with postgres_server(durable=True) as pg:
            pid = pg.process.pid if pg.process else None
            for students in _counts(
                args.students if args.phase == "cluster" else None, [CLUSTER_STUDENTS]
            ):
                for spread_s in spreads:
                    for processes in _counts(args.processes, CLUSTER_PROCESSES):
                        print(
                            f"{students} simulated phones, {processes} processes, taps within "
                            f"{spread_s:g} s...",
                            flush=True,
                        )
                        result = measure_cluster(students, processes, pg.url, pid, spread_s)
                        _record_sim("through HAProxy", result, load_before)


def _browser_note(r: BrowserResult) -> str:
    return (
        f"Each time is the page's own Date.now() when the heading, the answer or the teacher's "
        f"count entered its DOM, against time.time() just before the store's pose or reveal "
        f'(one clock). 5 questions x {r.phones} phones; the teacher\'s screen: "k of N answered" '
        f"on the Class page, redrawn by its fragment's run after its held pulse read. "
        f"Questions took {r.questions_s:.0f} s. Chromium (13 pages) and the server share 2 cores."
    )


def _record_sim(where: str, result: SimResult, load_before) -> None:
    results = [result]
    timing, load = sim_rows(results)
    note = (
        "Simulated phones (harness.phones): the page's HTTP protocol, from one asyncio client "
        "process on the same 2 cores as the servers (its CPU is the last CPU figure; its loop "
        "lag delays every time it notes). Each phone taps at a random moment within the "
        "seconds given after all have the question; a tap not answered within 10 s is "
        "'timed out' (the page would send it by its script run instead); 'lost' are taps the "
        "store never counted before the reveal (the bench reveals once the store's count has "
        "stood still 5 s). Ask and Reveal are the store's pose and reveal from the bench's "
        "process: an app process hears another process's change within its watcher's 0.1 s "
        "(a teacher's own Ask is heard at once by the process that runs it). The teacher's "
        "count is its held pulse read (the Class page then reruns its fragment: phase 1)."
    )
    if any(r.processes > 1 for r in results):
        limits = ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in CLUSTER_LIMITS.items())
        note += (
            f" HAProxy's per-address limits raised ({limits}): every phone comes from "
            "127.0.0.1 with 2 keep-alive connections, past the defaults sized for 60 students "
            "behind one router (1,000 open, 1,500 new connections and 20,000 requests in 10 s)."
        )
    record(
        "class_instant",
        f"An instant class: simulated phones, {where}, {result.students} phones: times",
        timing,
        notes=_notes(load_before, note),
    )
    record(
        "class_instant",
        f"An instant class: simulated phones, {where}, {result.students} phones: CPU and memory",
        load,
        notes=_notes(load_before, ""),
    )


def _notes(before, text: str) -> str:
    return (text + "\n\n" if text else "") + load_average(before, os.getloadavg())


if __name__ == "__main__":
    main()
