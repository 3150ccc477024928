"""The line to train (issue 38, item 5): visitors pressing Train with different settings each
get their run, first come first, each to its end, told their place and wait meanwhile; a
benchmark waits for one piece, not for the runs in line; one run at a time for each visitor.

Driven through Lab.train, the function the page calls, with the page's callbacks, against a
stand-in worker that trains nothing (each piece only moves its training on), so that ten runs
take seconds. Ten visitors pressing Train at once used to share the front piece by piece, each
training's kept pieces dropped before its turn came back (eight part-way trainings were kept),
so none finished: the first test failed then (none of the ten had finished after 30 s).
"""

from __future__ import annotations

import threading
import time

import pytest

from lnlab.core.errors import BusyError
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.run import LabResult, recipes
from lnlab.labs.training.train import Recipe, VariantRun
from lnlab.labs.training.worker import (
    PART_WAY_KEEP_S,
    PART_WAY_KEPT,
    PART_WAY_MAX,
    RATE_S,
    Grads,
    Lab,
    Leg,
    Progress,
    grads_piece,
    piece_steps,
)
from lnlab.serving import heavy_work


def config(seed: int) -> TrainConfig:
    """Pre-LN, 8 blocks x 300 steps: three trainings of five pieces (60 steps each)."""
    return TrainConfig(variants=("pre",), layers=8, steps=300, seed=seed)


class Instant:
    """A stand-in for the worker that trains nothing: a piece takes `piece_s`, reports its last
    step and moves its training to `until`, its state saying where it stood, so a training
    that starts again from nothing shows. Logs every piece, and lets a test act before one
    (`before(number)`)."""

    def __init__(self, piece_s: float = 0.002, before=None) -> None:
        self.piece_s = piece_s
        self.before = before
        self.log: list[tuple[int, Recipe | None, int, int]] = []  # seed, recipe, from, until
        self._lock = threading.Lock()

    def call(self, fn, *args, timeout_s, on_progress=None):
        if self.before is not None:
            self.before(len(self.log) + 1)
        time.sleep(self.piece_s)
        if fn is grads_piece:
            seed, padding = args
            with self._lock:
                self.log.append((seed, None, 0, 0))
            return Grads(seed, padding, {"post": (), "pre": ()})
        recipe, state, until, _ = args
        start = int(state or b"0")
        with self._lock:
            self.log.append((recipe.seed, recipe, start, until))
        if on_progress is not None:
            on_progress(until)
        if until < recipe.steps:
            return Leg(recipe, until, str(until).encode())
        losses = (0.0,) * recipe.steps
        return Leg(recipe, until, run=VariantRun(recipe.variant, losses, 0.0, 0.0, (), (), 0.0))


class Gone(BaseException):
    """What Streamlit raises in the script of a visitor who left (here: the test gave up)."""


class Visitor:
    """A visitor pressing Train: Lab.train in a thread, with the page's two callbacks."""

    def __init__(self, lab: Lab, name: str, settings: TrainConfig, give_up: threading.Event):
        self.name, self.settings = name, settings
        self.places: list[tuple[int, float | None]] = []
        self.texts: list[str] = []
        self.result: LabResult | None = None
        self.error: BaseException | None = None
        self.finished_at = 0.0

        def on_progress(progress: Progress) -> None:
            if give_up.is_set():
                raise Gone
            if not self.texts or self.texts[-1] != progress.text():
                self.texts.append(progress.text())

        def on_wait(place: int, expected_s: float | None) -> None:
            if give_up.is_set():
                raise Gone
            self.places.append((place, expected_s))

        def run() -> None:
            try:
                self.result = lab.train(settings, name, on_progress, on_wait)
                self.finished_at = time.monotonic()
            except BaseException as err:  # kept for the assertions
                self.error = err

        self.thread = threading.Thread(target=run, name=name, daemon=True)


def wait_until(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def crowd(lab: Lab, count: int, all_in: threading.Event, give_up_s: float = 30.0) -> list[Visitor]:
    """`count` visitors press Train in turn, each once the one before holds its place in line
    (so the order is known), then `all_in` is set; all give up after `give_up_s`."""
    give_up = threading.Event()
    visitors = [Visitor(lab, f"visitor {k}", config(k), give_up) for k in range(count)]
    for v in visitors:
        v.thread.start()
        wait_until(lambda v=v: v.texts or v.places or not v.thread.is_alive())  # has its place
    all_in.set()
    deadline = time.monotonic() + give_up_s
    for v in visitors:
        v.thread.join(max(0.0, deadline - time.monotonic()))
    give_up.set()
    for v in visitors:
        v.thread.join(30)
    return visitors


def test_ten_visitors_with_different_settings_each_finish_in_turn() -> None:
    """Ten runs of 15 pieces each: every run finishes, in the order pressed, with exactly its
    15 pieces (no training started again) one after the other (no run's pieces between
    another's); each visitor after the first was told its place on joining (the 2nd visitor
    1st in line, ... the 10th 9th) and the runs ahead in its progress bar."""
    all_in = threading.Event()
    runner = Instant(before=lambda number: all_in.wait(30))  # the first piece waits for all
    lab = Lab(runner, piece_s=None)  # type: ignore[arg-type]  # pieces by steps alone
    lab.rate_s = 0.001  # as measured on this stand-in: ten runs fit the line's limit on waits
    visitors = crowd(lab, 10, all_in)
    unfinished = [f"{v.name}: {v.error!r}" for v in visitors if v.result is None]
    assert not unfinished, unfinished
    assert all(v.result.config == v.settings for v in visitors)
    assert [v.finished_at for v in visitors] == sorted(v.finished_at for v in visitors)
    pieces = [(recipe, start) for _, recipe, start, _ in runner.log if recipe]
    per_training = piece_steps(8)
    for v in visitors:
        for recipe in recipes(v.settings):
            starts = [start for r, start in pieces if r == recipe]
            assert starts == list(range(0, recipe.steps, per_training)), (v.name, starts)
    seeds = [seed for seed, *_ in runner.log]
    assert seeds == sorted(seeds)  # run by run: 0's 16 jobs, then 1's, ...
    assert len(runner.log) == 10 * (3 * 5 + 1)
    for k, v in enumerate(visitors[1:], start=1):
        assert v.places[0][0] == k, (v.name, v.places[:3])
        queued = f"waiting for the runs ahead ({heavy_work.ordinal(k)} in line"
        assert any(queued in text for text in v.texts), (v.name, v.texts[:3])
    assert heavy_work.training_line().waiting() == 0 and heavy_work.line().waiting() == 0


def test_the_wait_shown_counts_the_runs_ahead() -> None:
    """The expected wait a visitor is shown on joining is the estimate of the runs ahead of it:
    each run's steps x blocks at the measured pace, plus the gradients and a run's own time;
    the third visitor, behind a run that has not started its pieces and one waiting, is told
    about two runs."""
    hold = threading.Event()
    runner = Instant(before=lambda number: hold.wait(30))
    lab = Lab(runner, piece_s=None)  # type: ignore[arg-type]
    lab.rate_s, lab.grads_s, lab.run_s = 0.01, 0.7, 0.3  # 3 x 300 x 8 x 0.01 + 1 = 73 s a run
    assert lab.cost_s(config(0)) == pytest.approx(73.0)
    give_up = threading.Event()
    visitors = [Visitor(lab, f"visitor {k}", config(k), give_up) for k in range(3)]
    try:
        for v in visitors:
            v.thread.start()
            wait_until(lambda v=v: heavy_work.training_place(v.name) is not None)
        wait_until(lambda: len(visitors[2].places) > 0)
        place, expected = visitors[2].places[0]
        assert place == 2 and expected == pytest.approx(2 * 73.0, abs=2.0)
        assert "about 73 s of training" in visitors[2].texts[-1]
    finally:
        hold.set()
        for v in visitors:
            v.thread.join(30)
    assert all(v.result is not None for v in visitors)


class Benchmark:
    """Another visitor's benchmark: joins the heavy-work line when told, logs its turn."""

    def __init__(self, log: list) -> None:
        self.log = log
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with heavy_work.front("benchmark"):
            self.log.append(("benchmark",))


def test_a_benchmark_waits_for_one_piece_not_for_the_runs_in_line() -> None:
    """Five runs in line; a benchmark pressed during the first run's first piece is 1st in the
    heavy-work line (the runs waiting to train are not in it) and runs right after that piece."""
    started, go = threading.Event(), threading.Event()

    def before(number: int) -> None:
        if number == 1:
            started.set()
            assert go.wait(30)

    runner = Instant(before=before)
    lab = Lab(runner, piece_s=None)  # type: ignore[arg-type]
    give_up = threading.Event()
    visitors = [Visitor(lab, f"visitor {k}", config(k), give_up) for k in range(5)]
    benchmark = Benchmark(runner.log)
    try:
        for v in visitors:
            v.thread.start()
            wait_until(lambda v=v: heavy_work.training_place(v.name) is not None)
        assert started.wait(30)
        assert heavy_work.training_line().waiting() == 4 and heavy_work.line().waiting() == 0
        benchmark.thread.start()
        wait_until(lambda: heavy_work.place("benchmark") is not None)
        assert heavy_work.place("benchmark") == 1
    finally:
        go.set()
        benchmark.thread.join(30)
        for v in visitors:
            v.thread.join(30)
    assert runner.log.index(("benchmark",)) == 1  # after the first piece, before the second
    assert all(v.result is not None for v in visitors)


def test_one_run_at_a_time_for_each_visitor() -> None:
    """While a visitor's run waits in line, the same visitor pressing Train with other settings
    (another tab) is told to wait for the first; once it has finished, the second goes."""
    runner = Instant()
    lab = Lab(runner, piece_s=None)  # type: ignore[arg-type]
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with heavy_work.training_front("someone else", cost=lambda: 10.0):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(10)
    first = Visitor(lab, "visitor", config(1), threading.Event())
    try:
        first.thread.start()
        wait_until(lambda: heavy_work.training_place("visitor") == 1)
        with pytest.raises(BusyError, match="one run at a time for each visitor"):
            lab.train(config(2), "visitor")
    finally:
        release.set()
        holder.join(10)
        first.thread.join(30)
    assert first.result is not None
    assert lab.train(config(2), "visitor").config == config(2)


def test_a_full_line_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the most runs the line takes, Train is refused at once with a message that says why
    and what to do; the runs in line are untouched."""
    line = heavy_work.training_line()
    monkeypatch.setattr(line, "max_waiting", 2)
    hold = threading.Event()
    runner = Instant(before=lambda number: hold.wait(30))
    lab = Lab(runner, piece_s=None)  # type: ignore[arg-type]
    give_up = threading.Event()
    visitors = [Visitor(lab, f"visitor {k}", config(k), give_up) for k in range(3)]
    try:
        for v in visitors:
            v.thread.start()
            wait_until(lambda v=v: heavy_work.training_place(v.name) is not None)
        full = pytest.raises(BusyError, match=r"2 runs are already waiting to train.*trained")
        with full:
            lab.train(config(9), "visitor 9")
    finally:
        hold.set()
        for v in visitors:
            v.thread.join(30)
    assert all(v.result is not None for v in visitors)


def test_a_training_part_way_is_never_dropped_while_a_run_needs_it() -> None:
    """A run in progress (or in line) keeps its part-way trainings however many others are kept;
    trainings no run needs are kept PART_WAY_KEPT at least, PART_WAY_MAX while younger than
    PART_WAY_KEEP_S; once its run stops, a training is kept that long from then."""
    now = [0.0]
    lab = Lab(Instant(), clock=lambda: now[0])  # type: ignore[arg-type]
    mine = config(1)
    recipe = recipes(mine)[0]
    with lab._lock:
        lab._pinned.update(recipes(mine))  # as train() does while the run is in flight
        lab._keep(Leg(recipe, 60, b"60"))
        others = [Recipe("pre", 8, 1e-2, False, 0.5, 300, 100 + k) for k in range(40)]
        for other in others:
            lab._keep(Leg(other, 60, b"60"))
    assert recipe in lab._legs
    part_way = [r for r, leg in lab._legs.items() if leg.run is None and r != recipe]
    assert part_way == others[-PART_WAY_MAX:]  # young: the most kept
    now[0] += PART_WAY_KEEP_S
    with lab._lock:
        lab._unpin(mine)  # its visitor left: kept from now on, as the others
        lab._keep(Leg(others[-1], 120, b"120"))
    assert recipe in lab._legs  # it stopped just now
    part_way = [r for r, leg in lab._legs.items() if leg.run is None]
    assert len(part_way) == PART_WAY_KEPT and recipe in part_way and others[-1] in part_way
    now[0] += PART_WAY_KEEP_S
    with lab._lock:
        for other in others[:PART_WAY_KEPT]:
            lab._keep(Leg(other, 60, b"60"))
    assert recipe not in lab._legs  # eight newer ones, and it is old


def test_the_cost_counts_what_is_kept_and_the_measured_pace() -> None:
    lab = Lab(Instant())  # type: ignore[arg-type]
    settings = config(3)
    lab.rate_s, lab.grads_s, lab.run_s = 0.001, 0.5, 0.25
    assert lab.cost_s(settings) == pytest.approx(3 * 300 * 8 * 0.001 + 0.5 + 0.25)
    with lab._lock:
        lab._keep(Leg(recipes(settings)[0], 120, b"120"))
        lab._grads[(settings.seed, settings.padding)] = Grads(settings.seed, settings.padding, {})
    assert lab.cost_s(settings) == pytest.approx((3 * 300 - 120) * 8 * 0.001 + 0.25)


def test_the_pace_is_that_of_the_latest_pieces_waits_included() -> None:
    """Before any piece the pace is a free core's; pieces at 0.01 s a block x step bring it
    there within a run's worth; a benchmark's 4 s between two pieces counts, as the runs in
    line wait for it too; older pieces weigh less and less."""
    lab = Lab(Instant())  # type: ignore[arg-type]
    assert lab.rate_s == RATE_S
    lab._time(4.0, 400)
    assert 0.008 < lab.rate_s < 0.01
    for _ in range(10):
        lab._time(4.0, 400)
    assert lab.rate_s == pytest.approx(0.01, rel=0.05)
    lab._time(4.0, 0)
    assert lab.rate_s == pytest.approx(0.01 * 1.2, rel=0.05)  # 4 s more over ~2,000 of work
    for _ in range(20):
        lab._time(2.0, 400)
    assert lab.rate_s == pytest.approx(0.005, rel=0.05)


def test_queued_progress_text() -> None:
    assert Progress(0, 900, 73.0, 3, queued=True, wait_s=146.0).text() == (
        "0 of 900 steps; waiting for the runs ahead (3rd in line, about 146 s), "
        "then about 73 s of training"
    )
    assert Progress(120, 900, None, 1, queued=True).text() == (
        "120 of 900 steps; waiting for the runs ahead (1st in line)"
    )
