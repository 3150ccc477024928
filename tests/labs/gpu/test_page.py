"""The "Run it on the GPU" page, run on the CPU with AppTest: numbers, links, presenter mode
and the parity table's downloads (bad links: tests/pages/test_bad_links.py)."""

from __future__ import annotations

import contextlib
import json
import math
import re
import threading
import time

import numpy as np
import pandas as pd
import pytest
import torch
from helpers import (
    ROOT,
    downloaded,
    formulas,
    front_of_line_held,
    html_tables,
    page_test,
    read_csv_exact,
    record_downloads,
)
from streamlit.testing.v1 import AppTest

from lnlab.labs.gpu import benchmark
from lnlab.serving import heavy_work, worker
from lnlab.ui import state
from lnlab.ui.claims import Cookies

PAGE = str(ROOT / "pages" / "gpu.py")
HELLO_MEANS = [0.25, 0.1, 0.25, 0.2, 0.225, 0.2]  # by hand, row by row
HELLO_TOKENS = ["Hello", ",", " how", " are", " you", "?"]
# The "?" token (0.3, -0.1, 0.1, 0.5) has variance 0.05 and the largest max|x| / sigma_eps.
HELLO_KAPPA = 0.5 / math.sqrt(0.05 + 1e-5)
HELLO_KAPPA_MEAN = 0.8 / 0.25
_MPS = torch.backends.mps.is_available()
HAS_GPU = torch.cuda.is_available() or _MPS


def _app() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    return at


# The page first suggests sizes for the device "auto" picks, a GPU where there is one: these
# tests describe a page opened on a machine without one (on an H100 they saw GPU-sized inputs;
# hiding the GPU from torch inside one test process does not undo what the page cached).
CPU_MACHINE = pytest.mark.skipif(
    torch.cuda.is_available(), reason="the page's sizes here are a CPU machine's"
)


def _on_cpu(dtype: str = "float32") -> AppTest:
    at = _app()
    at.radio(key="gpu_device").set_value("cpu").run()
    if dtype != "float32":
        at.radio(key="gpu_dtype").set_value(dtype).run()
    assert not at.exception
    return at


STEPS = 1  # the section with the five steps' formulas and the parity table
SECTION = {"μ ": 0, "max rel error": STEPS, "median time (ms)": 3}  # where each table's column is


def _section(column: str) -> int:
    return next(k for start, k in SECTION.items() if column.startswith(start))


def _frame(at: AppTest, column: str) -> pd.DataFrame:
    """The first table with `column`, indexed by its first column, on the section holding it."""
    presenting = "present" in at.session_state and at.session_state["present"]
    if not _has_frame(at, column) and not presenting:
        at.radio(key="gpu_slide").set_value(_section(column)).run()
    table = next(t for t in html_tables(at) if column in t.columns)
    return table.set_index(table.columns[0])


def _has_frame(at: AppTest, column: str) -> bool:
    return any(column in t.columns for t in html_tables(at))


def _warnings(at: AppTest) -> list[str]:
    """The warnings other than the one that says a run's timings are the cache's."""
    return [w.value for w in at.warning if "these timings are" not in w.value]


def _step_formulas(at: AppTest) -> list[str]:
    """The formulas of the five steps' section, opened for them."""
    if at.session_state["gpu_slide"] != STEPS:
        at.radio(key="gpu_slide").set_value(STEPS).run()
    return formulas(at)


def _bound(u: float, step: str) -> float:
    """u (2 + a kappa), derived for the hello preset by hand (see test_timing)."""
    if step.startswith("Mean"):
        return u * (2 + 2 * HELLO_KAPPA_MEAN)
    return u * (2 + (2 if step.startswith("Standard") else 4) * HELLO_KAPPA)


def test_default_page_loads_with_float32_parity():
    at = _app()
    if not HAS_GPU:
        assert "No GPU on this machine" in at.info[0].value
    assert at.get("plotly_chart")  # the first section's error heatmap
    stats = _frame(at, "μ float64")
    assert list(stats.index) == HELLO_TOKENS
    np.testing.assert_allclose(stats["μ float64"], HELLO_MEANS, rtol=1e-15)
    parity = _frame(at, "max rel error")
    assert len(parity) == 6
    for step, row in parity.iterrows():
        assert row["max rel error"] < _bound(2.0**-24, step) < 1e-6, step
        assert row["within bound"] == "yes"
    assert any(
        r"\mu = \tfrac{1}{4}\big(0.1 + 0.3 + (-0.2) + 0.8\big) = 0.25" in f
        for f in _step_formulas(at)
    )
    assert not at.error and not at.warning


@pytest.mark.parametrize(
    ("dtype", "rounded", "u"),
    [
        ("float16", lambda v: torch.tensor(v).half().double(), 2.0**-11),
        ("bfloat16", lambda v: torch.tensor(v).bfloat16().double(), 2.0**-8),
    ],
)
def test_low_precision_errors_are_larger_but_bounded(dtype, rounded, u):
    at = _on_cpu(dtype)
    parity = _frame(at, "max rel error")
    for step, row in parity.iterrows():
        assert row["max rel error"] <= _bound(u, step), step
    assert parity["max rel error"].max() > 1e-5  # well above anything float32 gives
    # the "," token's mean: its inputs rounded to the dtype, averaged, and rounded back
    comma = [0.0, 0.1, 0.4, -0.1]
    expected = float(rounded(float(rounded(comma).mean())))
    stats = _frame(at, f"μ {dtype}")
    assert stats[f"μ {dtype}"].iloc[1] == expected != 0.1


def test_presets_typed_text_and_token_choice_change_the_numbers():
    at = _app()
    at.radio(key="gpu_preset").set_value("token-2468").run()
    assert at.text_area(key="gpu_text").value == "2, 4, 6, 8"
    assert _frame(at, "μ float64")["μ float64"].tolist() == [5.0]
    at.text_area(key="gpu_text").input("1 2 3 4 5\n0 0 0 0 10").run()
    stats = _frame(at, "μ float64")
    assert list(stats.index) == ["t1", "t2"]
    assert stats["μ float64"].tolist() == [3.0, 2.0]
    at.radio(key="gpu_token").set_value(1).run()
    assert any(r"\tfrac{1}{5}\big(0 + 0 + 0 + 0 + 10\big) = 2" in f for f in _step_formulas(at))


def test_bad_embeddings_show_an_error_and_keep_the_last_result():
    at = _app()
    at.text_area(key="gpu_text").input("1, 2\n3").run()
    assert not at.exception
    assert "row 2 has 1 number but row 1 has 2" in at.error[0].value
    np.testing.assert_allclose(_frame(at, "μ float64")["μ float64"], HELLO_MEANS)


def test_scale_up_on_the_cpu_shows_a_timing_table():
    at = _on_cpu()
    at.radio(key="gpu_slide").set_value(3).run()
    at.number_input(key="gpu_batch").set_value(2)
    at.number_input(key="gpu_seq").set_value(8)
    at.number_input(key="gpu_features").set_value(16).run()
    assert not _has_frame(at, "median time (ms)")
    at.button(key="gpu_run").click().run()
    assert not at.exception and not at.error
    table = _frame(at, "median time (ms)")
    assert list(table.index) == ["copy", "step by step", "fused F.layer_norm"]
    assert (table["median time (ms)"] > 0).all()
    # N = 256, R = 16, D = 16 in float32: (12 N + 8 R + 2 D) x 4 and (2 N + 2 D) x 4 bytes
    assert table["MB moved per call"].tolist() == [2048 / 1e6, 12928 / 1e6, 2176 / 1e6]
    assert table.loc["copy", "share of copy bandwidth"] == 1.0
    # 1 KiB is timed in the cache (where the OS tells its size), and the figure says so
    assert any("cache" in c.value and "timings" in c.value for c in at.caption)


@CPU_MACHINE
def test_the_sizes_say_which_memory_they_time_and_one_button_sizes_them_past_the_cache():
    """With the test's CPU (a 1 MiB last-level cache, conftest): the default x is 2 MiB, past
    the cache; 2 x 8 x 16 fits in it, the caption says so, and the button sizes it back."""
    at = _on_cpu()
    at.radio(key="gpu_slide").set_value(3).run()
    caption = next(c.value for c in at.caption if "elements of at most" in c.value)
    assert caption.replace("\\", "").startswith(
        "x (2 MiB) is 2.0 times the 1 MiB L3 cache: every pass streams from main memory"
    )
    assert not [b for b in at.button if b.key == "gpu_fit"]  # already past the cache
    at.number_input(key="gpu_batch").set_value(2)
    at.number_input(key="gpu_seq").set_value(8)
    at.number_input(key="gpu_features").set_value(16).run()
    caption = next(c.value for c in at.caption if "elements of at most" in c.value)
    assert "fit in the 1 MiB L3 cache: these timings are the cache's" in caption.replace("\\", "")
    at.button(key="gpu_fit").click().run()
    sizes = [at.number_input(key=k).value for k in ("gpu_batch", "gpu_seq", "gpu_features")]
    assert sizes == [1, 512, 1024]
    at = _on_cpu("float64")  # 8 bytes: half the elements
    at.radio(key="gpu_slide").set_value(3).run()
    at.button(key="gpu_fit").click().run()
    assert at.number_input(key="gpu_seq").value == 256


def test_an_over_cap_size_shows_an_error_and_disables_the_run():
    at = _on_cpu()
    at.radio(key="gpu_slide").set_value(3).run()
    at.number_input(key="gpu_batch").set_value(3)
    at.number_input(key="gpu_seq").set_value(1024)
    at.number_input(key="gpu_features").set_value(1024).run()
    assert not at.exception
    assert "3,145,728 elements is over the CPU cap of 2,097,152" in at.error[0].value
    assert at.button(key="gpu_run").disabled


def _small_run_ready(visitor: str) -> AppTest:
    """The page on the benchmark's slide with tiny sizes, its session named `visitor` in line."""
    at = _on_cpu()
    state.of(Cookies, at.session_state).browser = visitor  # claims.browser_id's
    at.radio(key="gpu_slide").set_value(3).run()
    at.number_input(key="gpu_seq").set_value(8)
    at.number_input(key="gpu_features").set_value(16).run()
    return at


def test_a_visitor_waits_their_turn_and_is_told_their_place():
    """Another visitor is at the front and a third is in line: this one is 2nd, waits for both,
    then sees the timings and how long it waited."""
    at = _small_run_ready("page visitor")
    held, waiting, page_waits, failed = (threading.Event() for _ in range(4))

    def hold_until_the_page_waits() -> None:
        with heavy_work.front("holder"):
            held.set()
            page_waits.wait(60)

    def third_in_line() -> None:
        with heavy_work.front("third", on_wait=lambda place, _: waiting.set()):
            pass

    def watch_the_page() -> None:  # the holder leaves once the page's visitor is 2nd in line
        while not failed.is_set() and heavy_work.place("page visitor") != 2:
            time.sleep(0.01)
        page_waits.set()

    others = [threading.Thread(target=f) for f in (hold_until_the_page_waits, third_in_line)]
    others[0].start()
    assert held.wait(10)
    others[1].start()
    assert waiting.wait(10)  # third is 1st in line
    watcher = threading.Thread(target=watch_the_page)
    watcher.start()
    try:
        at.button(key="gpu_run").click().run()
    finally:
        failed.set()  # whatever happened, the watcher and the holder stop
        for thread in (watcher, *others):
            thread.join(60)
    assert not at.exception and not _warnings(at)
    assert re.fullmatch(
        r"You waited \d+\.\d s in line \(2nd when you pressed Run\)\.",
        next(c.value for c in at.caption if c.value.startswith("You waited")),
    )
    assert _has_frame(at, "median time (ms)")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("own", "Your other run (from this tab or another tab of this browser) is still"),
        ("long", "The line for heavy work is about 100 s long, over the 60 s limit"),
        ("died", "The benchmark did not finish: the worker process ended (exit code -9). The"),
    ],
)
def test_a_refused_run_says_why(monkeypatch, setup, message):
    at = _small_run_ready("page visitor")
    if setup == "long":  # the last runs took 100 s each: waiting behind one would pass 60 s
        monkeypatch.setattr(heavy_work.line(), "_typical_s", 100.0)
    if setup == "died":

        def died(*args, **kwargs):
            raise worker.Died("the worker process ended (exit code -9)")

        monkeypatch.setattr(benchmark._WORKER, "call", died)
    holder = "page visitor" if setup == "own" else "another visitor"
    with front_of_line_held(holder) if setup != "died" else contextlib.nullcontext():
        at.button(key="gpu_run").click().run()
    assert not at.exception
    assert at.warning[0].value.replace("\\", "").startswith(message)  # unescape plain()
    assert not _has_frame(at, "median time (ms)")


def test_where_no_worker_can_start_the_timings_say_they_ran_in_the_server(monkeypatch):
    def no_processes(method: str):
        raise OSError("no processes here")

    monkeypatch.setattr(worker.multiprocessing, "get_context", no_processes)
    unstartable = worker.Worker()
    monkeypatch.setattr(benchmark, "_WORKER", unstartable)
    monkeypatch.setattr(worker, "HEAVY", unstartable)
    at = _small_run_ready("page visitor")
    at.button(key="gpu_run").click().run()
    assert not at.exception
    assert _has_frame(at, "median time (ms)")
    assert any(
        "Timed in the server process: the worker process for heavy work could not start" in c.value
        for c in at.caption
    )
    # and, at the top of the page while the start is retried, what happened and when it retries
    (notice,) = _warnings(at)
    assert notice.replace("\\", "").startswith(
        "The worker process for heavy work could not start (OSError: no processes here; once); "
        "it will try again in"
    )


# ---------------------------------------------------------------- links, presenter mode, exports

UNAVAILABLE = next(
    kind for kind, found in (("cuda", torch.cuda.is_available()), ("mps", _MPS)) if not found
)


def _link(query: dict[str, str]) -> AppTest:
    at = page_test("pages/gpu.py", query).run()
    assert not at.exception
    return at


@CPU_MACHINE
def test_the_url_holds_the_example_on_screen():
    at = _link({})
    assert dict(at.query_params) == {}  # a page just opened leaves the URL (and Back) alone
    at.radio(key="gpu_token").set_value(2).run()
    assert at.query_params["dev"] == "auto" and at.query_params["dtype"] == "float32"
    assert at.query_params["preset"] == "hello" and at.query_params["tok"] == "3"
    assert at.query_params["x"].split(";")[0] == "0.1,0.3,-0.2,0.8"
    # sized from the device: x twice the (test's) CPU's 1 MiB cache, 512 rows of 1024
    assert (at.query_params["batch"], at.query_params["seq"], at.query_params["feat"]) == (
        "1",
        "512",
        "1024",
    )


def test_link_round_trip_shows_the_same_numbers_and_never_runs_the_benchmark():
    link = {"dev": "cpu", "dtype": "float16", "x": "1,2,3,4,5;0,0,0,0,10", "tok": "2"}
    first = _link(link | {"batch": "2", "seq": "8", "feat": "16"})
    assert first.radio(key="gpu_device").value == "cpu"
    stats = _frame(first, "μ float64")
    assert list(stats.index) == ["t1", "t2"] and stats["μ float64"].tolist() == [3.0, 2.0]
    assert any(r"\tfrac{1}{5}\big(0 + 0 + 0 + 0 + 10\big) = 2" in f for f in _step_formulas(first))
    first.radio(key="gpu_slide").set_value(SECTION["median time (ms)"]).run()
    assert first.number_input(key="gpu_seq").value == 8
    assert not _has_frame(first, "median time (ms)")  # the button runs it, never a link
    second = _link(dict(first.query_params))
    assert second.query_params == first.query_params
    for column in ("μ float64", "max rel error"):
        pd.testing.assert_frame_equal(_frame(second, column), _frame(first, column))


def test_a_link_to_a_device_this_machine_lacks_falls_back_to_auto():
    at = _link({"dev": UNAVAILABLE, "dtype": "float32"})
    assert f"asks for the {UNAVAILABLE} device" in at.warning[0].value
    assert at.radio(key="gpu_device").value == "auto"
    np.testing.assert_allclose(_frame(at, "μ float64")["μ float64"], HELLO_MEANS)
    assert at.query_params["dev"] == "auto"


def test_a_token_the_input_lacks_shows_token_1_with_a_notice():
    at = _link({"preset": "token-2468", "tok": "4"})
    assert "Token 4 is not in the input (1 tokens)" in at.warning[0].value
    assert _frame(at, "μ float64")["μ float64"].tolist() == [5.0]


def test_presenter_mode_keeps_device_dtype_and_parity_and_hides_the_rest():
    at = _link({"present": "1", "dev": "cpu", "dtype": "bfloat16", "preset": "token-2468"})
    keys = {s.key for s in at.radio}
    assert keys == {"gpu_device", "gpu_dtype"}  # no preset, no token choice, no chooser
    assert not at.text_area and not at.get("download_button")
    assert _has_frame(at, "μ bfloat16") and not _has_frame(at, "max rel error")  # one slide
    at.button(key="gpu_next").click().run()
    assert at.query_params["s"] == "2"
    assert not at.radio and not _has_frame(at, "μ bfloat16")
    assert _has_frame(at, "max rel error")
    assert any(r"\tfrac{1}{4}\big(2 + 4 + 6 + 8\big) = 5" in f for f in formulas(at))
    at.button(key="present_exit").click().run()
    assert at.radio(key="gpu_preset").value == "token-2468"  # kept while hidden
    assert at.text_area(key="gpu_text").value == "2, 4, 6, 8"
    at.button(key="gpu_prev").click().run()
    assert at.radio(key="gpu_dtype").value == "bfloat16"


def test_parity_table_downloads_as_csv_and_json(monkeypatch):
    files = record_downloads(monkeypatch)
    at = _link({"dev": "cpu", "dtype": "float16"})
    shown = _frame(at, "max rel error")
    table = read_csv_exact(downloaded(at, "gpu_dl_csv", files)).set_index("step")
    pd.testing.assert_frame_equal(table, shown, check_exact=True)
    data = json.loads(downloaded(at, "gpu_dl_json", files))
    assert data["settings"] == {"token": 1, "device": "cpu", "dtype": "float16", "eps": 1e-5}
    assert [s["max_rel_error"] for s in data["steps"]] == shown["max rel error"].tolist()
    assert data["unit_roundoff"] == 2.0**-11
    x = np.array(data["x"])
    np.testing.assert_allclose(x.mean(axis=1), HELLO_MEANS)
    exact = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(data["y_float64"], exact, rtol=1e-12, atol=1e-15)
    half = torch.nn.functional.layer_norm(torch.tensor(x).half().float(), (4,), eps=1e-5)
    np.testing.assert_allclose(data["y_device"], half.numpy(), atol=4e-3)  # float16: u = 2^-11


def test_the_dtype_table_shows_float64s_tiny_unit_roundoff():
    at = _app()
    at.radio(key="gpu_slide").set_value(2).run()
    table = _frame(at, "u = 2^-p")
    assert table.loc["float64", "u = 2^-p"] == "1.11e-16"  # 2^-53, not rounded to 0
    assert table.loc["float16", "u = 2^-p"] == "0.0004883"  # 2^-11, 4 significant digits
    assert table.loc["float64", "x̂ bound at κ = 1"] == "6.661e-16"  # 6 u
