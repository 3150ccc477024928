"""The benchmark's worker process and its deadline: jobs run in another process, failures come
back as the same exception, a job past its limit or a dead worker costs one run, a job its
caller abandoned never answers another call, a failed start is retried after a back-off, and
the timing stops at one deadline that counts the warm-up."""

from __future__ import annotations

import os
import sys
import time
from types import SimpleNamespace

import pytest
from streamlit.runtime.scriptrunner_utils.exceptions import StopException
from streamlit.testing.v1 import AppTest

from lnlab.core.errors import InputError
from lnlab.labs.gpu import benchmark
from lnlab.serving import worker


@pytest.fixture(scope="module")
def light() -> worker.Worker:
    """A worker that imports nothing up front: starts in a fraction of a second."""
    w = worker.Worker(preload=())
    yield w
    w.stop()


def test_a_job_runs_in_another_process_and_the_worker_is_reused(light):
    assert light.call(os.getpid, timeout_s=30) != os.getpid()
    pid = light.pid()
    assert light.call(divmod, 7, 2, timeout_s=30) == (3, 1)
    assert light.pid() == pid and light.started == 1


def test_an_error_in_the_job_comes_back_as_itself(light):
    with pytest.raises(InputError, match="batch must be between 1 and 1,024, not 0"):
        light.call(benchmark.check_size, 0, 8, 8, "cpu", timeout_s=30)
    with pytest.raises(ValueError, match="invalid literal"):
        light.call(int, "x", timeout_s=30)
    assert light.alive()  # a failed job leaves the worker running


def test_a_job_past_its_limit_stops_the_worker_and_the_next_starts_a_new_one(light):
    started = light.started
    with pytest.raises(worker.TimedOut, match=r"passed its 0\.2 s limit"):
        light.call(time.sleep, 5, timeout_s=0.2)
    assert not light.alive()
    assert light.call(divmod, 1, 1, timeout_s=30) == (1, 0)
    assert light.started == started + 1


def test_a_worker_that_dies_is_reported_and_replaced(light):
    started = light.started
    with pytest.raises(worker.Died, match=r"ended \(exit code 3\)"):
        light.call(os._exit, 3, timeout_s=30)
    assert light.call(divmod, 1, 1, timeout_s=30) == (1, 0)
    assert light.started == started + 1


def counting(n: int, pause_s: float) -> str:
    """A job that reports 1..n, pausing between reports, as a training run does."""
    for k in range(1, n + 1):
        worker.report(k)
        time.sleep(pause_s)
    return f"counted to {n}"


def report_then_sleep(pause_s: float) -> str:
    """A job that reports once, then works `pause_s` without reporting (no cancel point)."""
    worker.report(1)
    time.sleep(pause_s)
    return "the abandoned job's result"


def stop_script(*progress) -> None:
    """What Streamlit does to a script whose visitor left or reran: raise a BaseException from
    inside whatever Streamlit call the script is making (here, drawing its progress)."""
    raise StopException()


def test_an_abandoned_job_is_cancelled_and_never_answers_the_next_caller(light):
    """The caller leaves at the first progress report: the job (100 s if let run) stops at its
    next report, and the next caller gets its own answer from the same worker process."""
    pid, discarded = light.pid() or light.call(os.getpid, timeout_s=30), light.discarded
    with pytest.raises(StopException):
        light.call(counting, 10_000, 0.01, timeout_s=30, on_progress=stop_script)
    assert light.call(divmod, 7, 2, timeout_s=30) == (3, 1)
    assert light.discarded == discarded + 1
    assert light.pid() == pid  # cancelled, not killed: a killed job would have cost a restart


def test_an_abandoned_job_that_ends_anyway_has_its_reply_discarded(light):
    pid, discarded = light.call(os.getpid, timeout_s=30), light.discarded
    with pytest.raises(StopException):
        light.call(report_then_sleep, 0.3, timeout_s=30, on_progress=stop_script)
    assert light.call(str, "mine", timeout_s=30) == "mine"
    assert light.discarded == discarded + 1 and light.pid() == pid


def test_an_abandoned_job_that_does_not_end_is_stopped_with_its_worker(light, monkeypatch):
    """No report, so no cancel point: past its deadline the worker is stopped, and the next
    call runs in a new one."""
    # the abandoned job's own limit is 30 s; the next call gives up on it 1 s after it began
    monkeypatch.setattr(worker, "SETTLE_GRACE_S", -29.0)
    light.call(os.getpid, timeout_s=30)
    started = light.started
    with pytest.raises(StopException):
        light.call(report_then_sleep, 60, timeout_s=30, on_progress=stop_script)
    assert light.call(str, "mine", timeout_s=30) == "mine"
    assert light.started == started + 1


def steps_until_asked(n: int, hold_at: int) -> int:
    """A job in small steps, as a training piece: before each step after the first it asks
    whether to yield and ends there; it reports each step, and at step `hold_at` waits (up
    to 30 s) for the ask, so that the test knows where it was asked. Returns the steps done."""
    for k in range(1, n + 1):
        if k > 1 and worker.yield_asked():
            return k - 1
        worker.report(k)
        if k == hold_at:
            deadline = time.monotonic() + 30
            while not worker.yield_asked() and time.monotonic() < deadline:
                time.sleep(0.001)
    return n


def test_a_job_asked_to_yield_ends_after_its_step_with_what_it_has(light):
    """Someone waits for the worker (issue 38: a bystander's benchmark behind a training
    piece): asked from the server while it runs, the job sees it at its next step and
    answers with the steps it has done; the worker goes on running (no cancel, no restart)."""
    assert not light.ask_yield()  # no job under way: nothing to ask
    pid = light.pid() or light.call(os.getpid, timeout_s=30)
    asks = light.yields_asked

    def ask_at_third(k: int) -> None:
        if k == 3:
            assert light.ask_yield()

    assert light.call(steps_until_asked, 1000, 3, timeout_s=30, on_progress=ask_at_third) == 3
    assert light.yields_asked == asks + 1 and light.pid() == pid
    assert not worker.yield_asked()  # in-process: never asked


def test_without_an_ask_a_job_runs_to_its_end_and_an_ask_never_reaches_the_next(light):
    """No one waits, no early end: the same job runs all its steps; an ask made for a job
    that has ended stops no later job."""
    assert light.call(steps_until_asked, 50, 0, timeout_s=30) == 50

    def ask_at_third(k: int) -> None:
        if k == 3:
            light.ask_yield()

    assert light.call(steps_until_asked, 50, 3, timeout_s=30, on_progress=ask_at_third) == 3
    assert light.call(steps_until_asked, 50, 0, timeout_s=30) == 50  # the ask was the last job's


def test_the_jobs_modules_are_imported_before_the_worker_is_ready():
    """Unpickling a job imports its function's module: under load that took seconds of the
    first job's time limit. The labs name their modules, and the worker imports them first."""
    import lnlab.labs.training.worker  # noqa: F401 (the app imports every page's modules)

    assert {"lnlab.labs.gpu.benchmark", "lnlab.labs.training.worker"} <= set(worker.HEAVY.preload)
    w = worker.Worker(preload=())
    w.needs("json")
    w.needs("json")
    try:
        assert w.preload == ("json",)
        assert w.call(eval, "'json' in __import__('sys').modules", timeout_s=30)
    finally:
        w.stop()


def test_a_failed_start_is_retried_after_a_growing_back_off(monkeypatch):
    """The worker that could not start says why and when it tries again; it does not try
    before then, waits twice as long after each failure, and works once a start succeeds."""
    tries, clock = [], SimpleNamespace(now=100.0)
    real = worker.multiprocessing.get_context

    def failing(method: str):
        tries.append(clock.now)
        if len(tries) <= 2:
            raise OSError("no processes here")
        return real(method)

    monkeypatch.setattr(worker.multiprocessing, "get_context", failing)
    w = worker.Worker(preload=(), clock=lambda: clock.now)
    try:
        assert w.trouble() == ""
        with pytest.raises(worker.Unavailable) as first:
            w.call(divmod, 1, 1, timeout_s=30)
        assert (
            str(first.value)
            == w.trouble()
            == (
                "the worker process for heavy work could not start (OSError: no processes here; "
                f"once); it will try again in {worker.RETRY_FIRST_S:.0f} s"
            )
        )
        clock.now += worker.RETRY_FIRST_S - 1
        with pytest.raises(worker.Unavailable, match="try again in 1 s"):
            w.call(divmod, 1, 1, timeout_s=30)
        assert tries == [100.0]  # not tried again before the back-off ended
        clock.now += 1
        with pytest.raises(
            worker.Unavailable, match=r"2 times in a row\); it will try again in 10 s"
        ):
            w.call(divmod, 1, 1, timeout_s=30)
        clock.now += 2 * worker.RETRY_FIRST_S
        assert w.call(divmod, 7, 2, timeout_s=30) == (3, 1)
        assert len(tries) == 3 and w.trouble() == "" and w.failures == 0
    finally:
        w.stop()


def test_the_back_off_is_capped():
    w = worker.Worker(clock=lambda: 0.0)
    w.failures, w.failure, w.retry_at = 20, "RuntimeError: no answer in 60 s", 0.0
    assert w.trouble().endswith("it will try again at the next run")
    w.retry_at = worker.RETRY_MAX_S
    assert "20 times in a row); it will try again in 300 s" in w.trouble()


def test_where_no_worker_can_start_the_benchmark_runs_in_process_and_says_so(monkeypatch):
    def no_processes(method: str):
        raise OSError("no processes here")

    monkeypatch.setattr(worker.multiprocessing, "get_context", no_processes)
    monkeypatch.setattr(benchmark, "_WORKER", worker.Worker())
    result = benchmark.run_scale_up(1, 4, 8, "cpu", deadline_s=0.01)
    assert result.numel == 32 and result.threads == benchmark.CPU_THREADS
    assert result.note == (
        "Timed in the server process: the worker process for heavy work could not start "
        f"(OSError: no processes here; once); it will try again in {worker.RETRY_FIRST_S:.0f} s."
    )
    assert benchmark._WORKER.failures == 1  # not tried again for every run


@pytest.mark.parametrize(
    "failure",
    [
        worker.Died("the worker process ended (exit code -9)"),
        worker.TimedOut("it passed its 5 s limit and was stopped"),
    ],
)
def test_a_failed_worker_is_a_message_and_the_next_run_starts_a_new_one(monkeypatch, failure):
    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(benchmark._WORKER, "call", fail)
    with pytest.raises(InputError) as refused:
        benchmark.run_scale_up(1, 4, 8, "cpu")
    assert str(refused.value) == (
        f"The benchmark did not finish: {failure}. The next run starts a new worker."
    )


def test_the_benchmark_runs_in_the_worker_within_its_deadline(monkeypatch):
    monkeypatch.setattr(benchmark, "STOP_GRACE_S", 120.0)  # a loaded machine is no failure
    result = benchmark.run_scale_up(2, 8, 16, "cpu", deadline_s=0.5)
    assert result.note == "" and benchmark._WORKER.pid() not in (None, os.getpid())
    assert result.threads == benchmark.CPU_THREADS


def test_the_deadline_counts_the_warm_up_and_stops_mid_round(monkeypatch):
    """Each call takes 1/8 s of a fake clock (exact in binary): past LONG_CALL_S, so the first
    warm-up call is also the first sample. Warming the three calls up takes 0.375 s."""
    clock = SimpleNamespace(now=0.0, step=0.125)

    def tick() -> None:
        clock.now += clock.step

    monkeypatch.setattr(benchmark, "time", SimpleNamespace(perf_counter=lambda: clock.now))
    calls = tuple(benchmark.Timed(name, tick, 8) for name in ("a", "b", "c"))
    # 2.0 s: rounds end at 0.75, 1.125, 1.5, 1.875; the fifth has room for one call only
    assert [m.samples for m in benchmark.time_calls(calls, "cpu", deadline_s=2.0)] == [6, 5, 5]
    assert clock.now == 2.0
    # a deadline passed during the warm-up still leaves one sample of each call
    clock.now = 0.0
    measured = benchmark.time_calls(calls, "cpu", deadline_s=0.2)
    assert [m.samples for m in measured] == [1, 1, 1]
    assert [m.median_s for m in measured] == [0.125] * 3
    assert clock.now == 0.375
    # a short call (1/64 s) is warmed up twice, then timed once to size its samples
    clock.now, clock.step = 0.0, 1 / 64
    assert [m.samples for m in benchmark.time_calls(calls, "cpu", deadline_s=0.0)] == [1, 1, 1]
    assert clock.now == 9 / 64


def test_a_worker_starts_after_a_streamlit_run_replaced_main(light):
    """Streamlit installs each page script as sys.modules["__main__"]; spawn would re-run it
    in the child (and fail, or run a page there). The worker starts without it."""
    AppTest.from_function(_a_page).run()
    assert "tmp" in getattr(sys.modules["__main__"], "__file__", "")  # the page, not pytest
    assert light.call(os.getpid, timeout_s=30) != os.getpid()


def _a_page() -> None:
    import streamlit as st

    st.write("a page")


def test_a_page_that_will_need_the_worker_starts_it_ahead_once() -> None:
    """warm() starts the worker in the background where `ahead` allows (the launcher's
    server), once; the first job then finds it running. Elsewhere (tests, AppTest) it does
    nothing."""
    w = worker.Worker(preload=())
    try:
        assert not w.warm() and w.started == 0  # not a launched server: nothing
        w.ahead = True
        assert w.warm()
        with w._lock:  # the start in the background holds it until the worker answers
            assert w.alive() and w.started == 1
        assert not w.warm()  # running: nothing more
        pid = w.pid()
        assert w.call(os.getpid, timeout_s=30) == pid and w.started == 1
    finally:
        w.stop()
