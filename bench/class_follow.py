"""Classes of 120 and 300 students on one server process: what following a class costs.

Run: `.venv/bin/python -m bench.class_follow` (`--students 120,300` to choose). For each number
of students, a fresh `streamlit run app.py` (one process, as `make run`) with its class store
in a temporary SQLite file, and every device speaking Streamlit's websocket protocol as the
browser does (harness.sessions.Session; no browser, so no drawing costs the machine):

- classes of at most CLASS_SIZE students, each with its teacher on the Class page (the
  teacher's cookie claim) and its students on their device's view (each with its own browser
  id in its cookie, joined beforehand through the store);
- each device follows its class as its page says: a fragment with a timer (`run_every`) is
  rerun on that timer; a pulse component (lnlab.ui.pulse, static/lnlab/pulse.mjs) is served
  as its JavaScript does: read the pulse every `every_ms` (one HTTP GET), say "ready" once,
  and rerun the fragment when a field it watches differs from what the fragment drew;
- a bystander on the step-through lesson presses Next every BYSTANDER_GAP_S, checked.

Phases: idle (IDLE_S, nothing asked); ask (the store poses a question, as the teacher's Ask
does): seconds until each student's device shows it; answer (each student taps an option at a
random moment over ANSWER_S, checked): the teacher's panel's runs, and the seconds from the last
tap to the teacher's panel counting every answer; reveal: seconds until each device shows the
answer. Reported: the server's CPU per second (idle, and over ask/answer/reveal), the teacher's
panel runs p50/p95, the bystander's Next p50/p95, the taps p50/p95, and the delays. Appends the
table to bench/results/class_follow.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import secrets
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from streamlit.components.v2.bidi_component.main import _make_trigger_id
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.browser import Server, serve
from bench.clicks import LESSON
from bench.report import load_average, record
from harness.sessions import LNLAB, Run, Session, WrongPage, cpu_of, stream
from harness.stats import percentile
from harness.students import section_number
from lnlab.classroom.live import LiveOption, LiveQuestion
from lnlab.classroom.store import ClassStore, Limits
from lnlab.ui.runtime.turns import PULSE_KEY

STUDENT_COUNTS = (120, 300)
CLASS_SIZE = 150  # students per class (the store's cap is 200): 300 students are 2 classes
IDLE_S = 20.0
ANSWER_S = 20.0
BYSTANDER_GAP_S = 1.0
OPENING = 10  # sessions opening at once
WAIT_S = 60.0  # for every device to show a change
SEED = 1
COUNT = re.compile(r"\*\*(\d+) of (\d+)\*\* answered")
QUESTION = LiveQuestion(
    qid="bench-mean",
    page="bench",
    prompt="What is the mean of 2, 4, 6, 8?",
    options=(LiveOption("5", "right"), LiveOption("4", "n-1"), LiveOption("20", "sum")),
    explanation="The sum over the count.",
)


class PulseReads:
    """One device's keep-alive HTTP connection for pulses, as a browser keeps one."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> dict | None:
        """The JSON at `path`, or None if the server did not answer 200."""
        for _ in range(2):  # a kept connection the server closed: open a new one once
            try:
                if self.writer is None:
                    self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
                assert self.reader is not None
                self.writer.write(f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
                head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1")
                length = int(re.search(r"(?im)^content-length:\s*(\d+)", head).group(1))
                body = await self.reader.readexactly(length)
                return json.loads(body) if head.split()[1] == "200" else None
            except (OSError, asyncio.IncompleteReadError, AttributeError):
                self.close()
        return None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


@dataclass
class Device:
    """One browser tab that follows a class: its session, what it has shown (marker -> when
    first), and its runs' times."""

    session: Session
    pulses: PulseReads
    role: str  # "teacher" or "student"
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    shown: dict[str, float] = field(default_factory=dict)
    runs_ms: list[tuple[float, float]] = field(default_factory=list)  # (when, ms)
    count: int = -1  # the teacher's panel: answers counted
    told: dict[str, bool] = field(default_factory=dict)  # pulse component -> said "ready"
    due: dict[str, float] = field(default_factory=dict)  # timer or pulse -> next time
    every: dict[str, float] = field(default_factory=dict)  # timer -> its interval, as `due` set

    async def run(self, states: Sequence[WidgetState] = (), fragment_id: str = "") -> Run:
        async with self.lock:
            run = await self.session.rerun(states, fragment_id)
        now = time.perf_counter()
        self.runs_ms.append((now, run.finished_ms))
        for text in run.texts:
            if text == f"## {QUESTION.prompt}":
                self.shown.setdefault("asked", now)
            if text.startswith("The answer:"):
                self.shown.setdefault("revealed", now)
            if found := COUNT.search(text):
                self.count = int(found.group(1))
                self.shown.setdefault(f"count {self.count}", now)
        return run

    async def follow(self, until: asyncio.Event) -> None:
        """Rerun what the page's timers and pulses say, until `until` is set."""
        while not until.is_set():
            now = time.perf_counter()
            for fragment, every in list(self.session.timers.items()):
                if self.every.get(fragment) != every:  # set anew: the browser restarts it
                    self.every[fragment], self.due[fragment] = every, now + every
                due = self.due[fragment]
                if now >= due:
                    self.due[fragment] = now + every
                    await self.run(fragment_id=fragment)
            for key, element in list(self.session.widgets.items()):
                if key.startswith(PULSE_KEY):
                    await self._pulse(key, element, now)
            wake = min(self.due.values(), default=now + 0.5)
            with suppress(TimeoutError):
                await asyncio.wait_for(until.wait(), max(0.01, wake - time.perf_counter()))

    async def _pulse(self, key: str, element, now: float) -> None:
        """What static/lnlab/pulse.mjs does at one tick."""
        data = json.loads(element.json)
        due = self.due.setdefault(key, now)
        if now < due:
            return
        self.due[key] = now + data["every_ms"] / 1000 * random.uniform(0.8, 1.2)
        pulse = await self.pulses.get(data["url"])
        if pulse is None:
            return
        fragment = self.session.fragments.get(key, "")
        if data["status"] != "ready" and not self.told.get(key):
            self.told[key] = True
            state = WidgetState(id=element.id, json_value=json.dumps({"status": "ready"}))
            await self.run([state], fragment)
        elif data["seen"] is None or any(pulse[f] != data["seen"][f] for f in data["watch"]):
            event = json.dumps([{"event": "changed", "value": pulse}])
            trigger = WidgetState(
                id=_make_trigger_id(element.id, "events"), json_trigger_value=event
            )
            await self.run([trigger], fragment)

    async def tap(self) -> float:
        """Tap one of the question's options: the tap's ms, checked."""
        keys = [k for k in self.session.widgets if k.startswith(f"live_opt_{QUESTION.qid}_")]
        if not keys:
            raise WrongPage("the student's device shows no options to tap")
        key = random.choice(keys)
        button = self.session.widgets[key]
        state = WidgetState(id=button.id, trigger_value=True)
        run = await self.run([state], self.session.fragments.get(key, ""))
        if not any(t.startswith("Your answer:") for t in run.texts):
            raise WrongPage(f"after a tap the device shows {run.texts}")
        return run.finished_ms


@dataclass
class Result:
    students: int
    classes: int
    open_s: float = 0.0
    idle_cpu: float = 0.0  # the server's CPU seconds per second
    busy_cpu: float = 0.0
    idle_pulses: int = 0  # pulse reads per second, idle (all devices)
    idle_runs: float = 0.0  # script runs per second, idle (all devices)
    bystander_ms: list[float] = field(default_factory=list)
    teacher_ms: list[float] = field(default_factory=list)
    tap_ms: list[float] = field(default_factory=list)
    asked_s: list[float] = field(default_factory=list)
    counted_s: list[float] = field(default_factory=list)
    revealed_s: list[float] = field(default_factory=list)
    failed: int = 0


async def open_device(
    stack: AsyncExitStack, server: Server, path: str, cookie: str, role: str, query: str = ""
) -> Device:
    ws = await stack.enter_async_context(stream(server.url, cookie=cookie, timeout_s=60))
    session = Session(ws, server.url + path)
    session.query_string = query
    device = Device(session, PulseReads(server.url), role)
    await device.run()
    return device


async def wait_shown(devices: Sequence[Device], marker: str, since: float) -> list[float]:
    """Seconds from `since` until each device showed `marker` (WAIT_S at most)."""
    deadline = time.perf_counter() + WAIT_S
    while time.perf_counter() < deadline and not all(marker in d.shown for d in devices):
        await asyncio.sleep(0.05)
    missing = [d for d in devices if marker not in d.shown]
    if missing:
        raise WrongPage(f"{len(missing)} devices never showed {marker!r} within {WAIT_S} s")
    return [d.shown[marker] - since for d in devices]


def _ready(device: Device) -> bool:
    """Whether the page draws every pulse component as "ready" (its browser said so)."""
    return all(
        json.loads(element.json)["status"] == "ready"
        for key, element in device.session.widgets.items()
        if key.startswith(PULSE_KEY)
    )


async def settled(devices: Sequence[Device]) -> None:
    """Until each device that follows pulses has said "ready" and been redrawn so, and a
    second more (its timers, where it has any, run from the start)."""
    deadline = time.perf_counter() + WAIT_S
    while not all(_ready(d) for d in devices):
        if time.perf_counter() > deadline:
            raise WrongPage("devices never said they read pulses")
        await asyncio.sleep(0.1)
    await asyncio.sleep(1.0)


async def bystander(session: Session, until: asyncio.Event, clicks: list[float]) -> None:
    """Next to the lesson's end and Previous back, BYSTANDER_GAP_S apart, each checked."""
    at = section_number(await session.rerun())
    forward = True
    while not until.is_set():
        forward = at < LESSON.count if forward else at <= 1
        key = LESSON.next if forward else LESSON.prev
        state = WidgetState(id=session.widgets[key].id, trigger_value=True)
        run = await session.rerun([state], session.fragments.get(key, ""))
        expected = at + (1 if forward else -1)
        if section_number(run) != expected:
            raise WrongPage(f"section {section_number(run)} after {key}, not {expected}")
        at = expected
        clicks.append(run.finished_ms)
        with suppress(TimeoutError):
            await asyncio.wait_for(until.wait(), BYSTANDER_GAP_S)


async def measure(students: int, store_url: str) -> Result:
    classes = -(-students // CLASS_SIZE)
    result = Result(students, classes)
    store = ClassStore(store_url, limits=Limits(students=CLASS_SIZE, joins_per_address=10**6))
    taught = []
    for c in range(classes):
        new = store.open_class()
        size = students // classes + (c < students % classes)
        browsers = [secrets.token_urlsafe(18) for _ in range(size)]
        for browser in browsers:
            store.join(new.code, browser=browser)
        taught.append((new, browsers))
    async with serve(LNLAB) as server, AsyncExitStack() as stack:
        pid = server.process.pid
        start = time.perf_counter()
        teachers: list[Device] = []
        devices: list[Device] = []
        for new, _ in taught:
            cookie = f"lnlab_teacher={new.code}.{new.teacher_secret}"
            teachers.append(await open_device(stack, server, "/class", cookie, "teacher"))
        pending = [(new, b) for new, browsers in taught for b in browsers]
        for i in range(0, len(pending), OPENING):
            batch = pending[i : i + OPENING]
            devices += await asyncio.gather(
                *(
                    open_device(
                        stack, server, "/class", f"lnlab_browser={b}", "student", f"join={new.code}"
                    )
                    for new, b in batch
                )
            )
        result.open_s = time.perf_counter() - start
        ws = await stack.enter_async_context(stream(server.url, timeout_s=60))
        lesson = Session(ws, server.url + LNLAB.path)
        everyone = teachers + devices
        until = asyncio.Event()
        tasks = [asyncio.create_task(d.follow(until)) for d in everyone]
        tasks.append(asyncio.create_task(bystander(lesson, until, result.bystander_ms)))
        await settled(everyone)

        runs_before = sum(len(d.runs_ms) for d in everyone)
        cpu, begun = cpu_of(pid), time.perf_counter()
        await asyncio.sleep(IDLE_S)
        elapsed = time.perf_counter() - begun
        result.idle_cpu = (cpu_of(pid) - cpu) / elapsed
        result.idle_runs = (sum(len(d.runs_ms) for d in everyone) - runs_before) / elapsed

        cpu, begun = cpu_of(pid), time.perf_counter()
        for new, _ in taught:
            store.pose(new.code, new.teacher_secret, QUESTION)
        asked = time.perf_counter()
        result.asked_s = await wait_shown(devices, "asked", asked)

        async def tap(device: Device) -> None:
            await asyncio.sleep(random.uniform(0, ANSWER_S))
            result.tap_ms.append(await device.tap())

        answering = time.perf_counter()
        await asyncio.gather(*(tap(d) for d in devices))
        last_tap = time.perf_counter()
        for teacher, (_, browsers) in zip(teachers, taught, strict=True):
            result.counted_s += await wait_shown([teacher], f"count {len(browsers)}", last_tap)
        result.teacher_ms = [ms for t in teachers for when, ms in t.runs_ms if when >= answering]

        for new, _ in taught:
            store.reveal(new.code, new.teacher_secret, QUESTION.qid)
        revealed = time.perf_counter()
        result.revealed_s = await wait_shown(devices, "revealed", revealed)
        result.busy_cpu = (cpu_of(pid) - cpu) / (time.perf_counter() - begun)

        until.set()
        for outcome in await asyncio.gather(*tasks, return_exceptions=True):
            if isinstance(outcome, BaseException):
                result.failed += 1
                print(f"  a device failed: {outcome!r}")
        for d in everyone:
            d.pulses.close()
    store.close()
    return result


def _spread(samples: Sequence[float], scale: float = 1.0, digits: int = 0) -> str:
    if not samples:
        return "-"
    p50, p95 = percentile(samples, 0.5) * scale, percentile(samples, 0.95) * scale
    return f"{p50:.{digits}f} / {p95:.{digits}f} (max {max(samples) * scale:.{digits}f})"


def row(r: Result) -> tuple[str, ...]:
    return (
        f"{r.students} ({r.classes} {'class' if r.classes == 1 else 'classes'})",
        f"{r.idle_cpu:.2f}",
        f"{r.idle_runs:.1f}",
        f"{r.busy_cpu:.2f}",
        _spread(r.teacher_ms),
        _spread(r.bystander_ms),
        _spread(r.tap_ms),
        _spread(r.asked_s, digits=2),
        _spread(r.counted_s, digits=2),
        _spread(r.revealed_s, digits=2),
        str(r.failed),
    )


HEADER = (
    "students on 1 process",
    "server CPU s/s, idle",
    "script runs/s, idle",
    "server CPU s/s, ask to reveal",
    "teacher's panel run ms p50 / p95",
    "bystander's Next ms p50 / p95",
    "a student's tap ms p50 / p95",
    "Ask -> each device shows it, s",
    "last tap -> teacher counts it, s",
    "Reveal -> each device shows it, s",
    "devices failed",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", default=",".join(map(str, STUDENT_COUNTS)))
    args = parser.parse_args()
    random.seed(SEED)
    before = os.getloadavg()
    results = []
    for students in (int(n) for n in args.students.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{Path(tmp) / 'classes.db'}"
            os.environ["LNLAB_DATABASE_URL"] = url
            print(f"{students} students...", flush=True)
            results.append(asyncio.run(measure(students, url)))
    record(
        "class_follow",
        "Classes following their teacher on one process",
        [HEADER, *(row(r) for r in results)],
        notes=load_average(before, os.getloadavg()),
    )


if __name__ == "__main__":
    main()
