"""The training lab (lnlab.labs.training): the task, the norms against torch and float64, the
checked settings, the worker and its cache, the exported script, and every effect the page
states, each on a fixed seed with a margin measured on it (given in the test's docstring).

About 35 s on one free core: the trained runs are shared by module-scoped fixtures.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import threading
import time

import pytest
import torch
import torch.nn.functional as F
from helpers import chart_contrast_problems, front_of_line_held, needs_cuda, validated

from lnlab.classroom.asking import live_question
from lnlab.core.backend import cpu_threads
from lnlab.core.errors import BusyError, InputError
from lnlab.core.numbers import fmt
from lnlab.labs.training import data, norms
from lnlab.labs.training.config import MAX_WORK, TrainConfig
from lnlab.labs.training.lesson import (
    BATCH,
    DEPTH,
    GAP,
    GRADS,
    NO_GAP,
    SAME,
    batch_question,
    depth_question,
    gap_question,
    grads_question,
    label,
    slides,
)
from lnlab.labs.training.run import LabResult, depth_grads, final_loss, fluctuation, run_lab
from lnlab.labs.training.script import training_script
from lnlab.labs.training.train import VariantRun, train_variant
from lnlab.labs.training.worker import Lab, time_left
from lnlab.serving import worker
from lnlab.teach.misconceptions import MISCONCEPTIONS
from lnlab.teach.quiz import RIGHT, Question, diagnose, options

TINY = TrainConfig(variants=("post", "pre"), layers=1, steps=20)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """As the lab's runs: one CPU thread, so the margins are the ones measured."""
    with cpu_threads(1):
        yield


# ---------------------------------------------------------------- the task


def test_batches_are_seeded_and_ranked() -> None:
    make = lambda: data.make_batch(torch.Generator().manual_seed(3), 8, 0.5)  # noqa: E731
    (tokens, mask, targets), (tokens2, *_) = make(), make()
    assert torch.equal(tokens, tokens2)
    assert (tokens[~mask] == data.PAD).all() and (tokens[mask] > 0).all()
    for row in range(8):
        real = tokens[row, mask[row]]
        ranks = torch.argsort(torch.argsort(real, stable=True), stable=True)  # rank, ties by place
        assert torch.equal(targets[row, mask[row]], ranks)
        assert (targets[row, ~mask[row]] == -100).all()


@pytest.mark.parametrize("padding", [0.0, 0.25, 0.5, 0.75])
def test_padding_share_is_as_asked(padding: float) -> None:
    """Over 4,096 sentences the padding share is within 0.03 of the one asked for."""
    _, mask, _ = data.make_batch(torch.Generator().manual_seed(0), 4096, padding)
    assert abs((1 - mask.float().mean()) - padding) < 0.03


# ---------------------------------------------------------------- the norms


def _xm() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 6, 8, generator=g, dtype=torch.float64)
    mask = torch.arange(6) < torch.tensor([6, 3, 1, 4])[:, None]
    return x, mask


def test_layer_and_rms_norm_against_formulas() -> None:
    x, mask = _xm()
    layer = norms.make_norm("layer", 8).double()
    assert torch.allclose(layer(x, mask), F.layer_norm(x, (8,), eps=norms.EPS))
    rms = norms.make_norm("rms", 8).double()
    expected = x / torch.sqrt((x**2).mean(-1, keepdim=True) + norms.EPS)
    assert torch.allclose(rms(x, mask), expected)
    dyt = norms.make_norm("dyt", 8).double()
    assert torch.allclose(dyt(x, mask), torch.tanh(0.5 * x))
    assert norms.make_norm("none", 8)(x, mask) is x


@pytest.mark.parametrize("masked", [False, True])
def test_batch_norm_against_torch(masked: bool) -> None:
    """Naive Batch Norm is F.batch_norm over every position; masked, over the real tokens
    only; both update running statistics as nn.BatchNorm1d does, and use them in eval."""
    x, mask = _xm()
    bn = norms.make_norm("masked batch" if masked else "batch", 8).double()
    rows = x[mask] if masked else x.reshape(-1, 8)
    mean, var = torch.zeros(8, dtype=x.dtype), torch.ones(8, dtype=x.dtype)
    expected = F.batch_norm(rows, mean, var, training=True, momentum=0.1, eps=norms.EPS)
    got = bn(x, mask)
    assert torch.allclose(got[mask] if masked else got.reshape(-1, 8), expected)
    assert torch.allclose(bn.running_mean, mean) and torch.allclose(bn.running_var, var)
    bn.eval()
    assert torch.allclose(bn(x, mask), (x - mean) / torch.sqrt(var + norms.EPS))


# ---------------------------------------------------------------- the settings


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"variants": ()}, "at least one variant"),
        ({"variants": ("post", "post")}, "each once"),
        ({"variants": ("<b>",)}, "unknown variant"),
        ({"layers": 9}, "layers must be"),
        ({"steps": 10**9}, "steps must be"),
        ({"lr": 0.5}, "learning rate"),
        ({"padding": 0.9}, "padding share"),
        ({"seed": -1}, "seed must be"),
        ({"variants": ("none", "post", "pre", "rms", "bn"), "layers": 8, "steps": 300}, "cap"),
    ],
)
def test_bad_settings_say_what_is_wrong(changes: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        TrainConfig(**changes)


def test_the_default_fits_the_cap() -> None:
    assert TrainConfig().work <= MAX_WORK


def test_time_left() -> None:
    assert time_left(0, 100, 1.0) == "0 of 100 steps, starting..."
    assert time_left(25, 100, 5.0) == "25 of 100 steps, about 15 s left"


# ---------------------------------------------------------------- the effects


@pytest.fixture(scope="module")
def grads() -> dict[str, tuple[tuple[float, ...], ...]]:
    torch.manual_seed(0)
    return depth_grads(seed=0, padding=0.5)


def test_post_ln_last_block_gradient_exceeds_pre_ln(grads) -> None:
    """At initialisation (seed 0), the last block's gradient norm, post-LN over pre-LN:
    1.63x with one block, 2.68x with 6 (measured). Asserted: over 2 at 6 blocks, and at
    least 0.5 more than with one block: the gap grows with depth (Xiong et al. 2020)."""
    ratios = [p[-1] / q[-1] for p, q in zip(grads["post"], grads["pre"], strict=True)]
    assert ratios[5] > 2.0
    assert ratios[5] > ratios[0] + 0.5


def test_pre_ln_last_block_gradient_shrinks_with_depth(grads) -> None:
    """Pre-LN's last-block gradient with 8 blocks is 0.54x its value with one (seed 0,
    measured); asserted under 0.75x."""
    pre_last = [g[-1] for g in grads["pre"]]
    assert pre_last[7] < 0.75 * pre_last[0]


@pytest.fixture(scope="module")
def batch_norms() -> dict[tuple[str, float], VariantRun]:
    """Naive and masked Batch Norm, 1 block: 60 steps with 50% padding, 20 with none."""
    return {
        (v, p): train_variant(v, 1, 1e-3, True, p, 60 if p else 20, 0)
        for v in ("bn", "mbn")
        for p in (0.0, 0.5)
    }


def test_padding_makes_naive_batch_statistics_fluctuate(batch_norms) -> None:
    """With 50% padding (seed 0) the first norm's batch variance varies by 10.2% (std over
    mean) under naive Batch Norm and 4.1% under masked (measured); asserted: naive over 1.8x
    masked. Without padding the two are the same computation: equal numbers."""
    naive, masked = batch_norms["bn", 0.5], batch_norms["mbn", 0.5]
    assert fluctuation(naive.bn_var) > 1.8 * fluctuation(masked.bn_var)
    assert batch_norms["bn", 0.0].bn_var == batch_norms["mbn", 0.0].bn_var


def test_train_eval_gap_only_where_running_statistics_are(batch_norms, tiny_lab) -> None:
    """Layer Norm has no running statistics: its held-out loss is the same in both modes.
    Naive Batch Norm with 50% padding: gap -0.0097; masked: +0.0045 (seed 0, measured);
    asserted: naive's gap larger than masked's in size."""
    for run in tiny_lab.runs:
        assert run.eval_loss == run.eval_loss_train_mode
    naive, masked = batch_norms["bn", 0.5], batch_norms["mbn", 0.5]
    assert abs(naive.eval_loss - naive.eval_loss_train_mode) > abs(
        masked.eval_loss - masked.eval_loss_train_mode
    )


def test_post_ln_needs_warm_up_at_a_large_learning_rate() -> None:
    """6 blocks, learning rate 0.01, 40 steps, seed 0: post-LN ends at 1.56 with warm-up and
    2.50 without, stuck near chance (ln 16 = 2.77) (measured). Asserted: at least 0.6 worse
    without warm-up."""
    on = train_variant("post", 6, 1e-2, True, 0.5, 40, 0)
    off = train_variant("post", 6, 1e-2, False, 0.5, 40, 0)
    assert final_loss(off) > final_loss(on) + 0.6


# ---------------------------------------------------------------- runs, worker, cache


@pytest.fixture(scope="module")
def tiny_lab() -> LabResult:
    return run_lab(TINY)


def test_the_lessons_charts_are_valid_plotly(tiny_lab) -> None:
    lesson = slides(TINY, tiny_lab)
    charts = [s.figure for s in lesson.sections if s.figure is not None]
    assert len(charts) == 4  # loss, gradients, depth, warm-up (no Batch Norm chosen)
    for chart in charts:
        validated(chart.plot())
        # read without seeing it (tests/pages/test_charts.py checks the other lessons')
        assert chart.label and re.search(r"\d", chart.summary), (chart.label, chart.summary)
        assert not chart.table().empty
        assert not chart_contrast_problems(chart.plot().to_plotly_json())
    assert slides(TINY, None).sections[1].callouts  # before training: "press Train"


def test_a_run_has_every_part(tiny_lab) -> None:
    assert [r.variant for r in tiny_lab.runs] == ["post", "pre"]
    assert tiny_lab.warmup_off is tiny_lab.run("post")  # warm-up off is the chosen run
    assert tiny_lab.warmup_on.losses != tiny_lab.warmup_off.losses
    assert all(len(r.losses) == TINY.steps and len(r.grad_norms) == 1 for r in tiny_lab.runs)
    assert len(tiny_lab.depth_grads["post"]) == 8


def test_the_worker_gives_the_same_numbers_once(tiny_lab) -> None:
    """The spawned worker reproduces the in-process run; the second ask is the cache's."""
    lab = Lab(worker.Worker())
    reports: list[tuple[int, int]] = []
    try:
        result = lab.train(TINY, "a", lambda done, total, s: reports.append((done, total)))
        assert lab.train(TINY, "b") is result
    finally:
        lab.worker.stop()
    assert lab.runs_started == 1
    assert reports[-1] == (3 * TINY.steps, 3 * TINY.steps)
    assert [r.losses for r in result.runs] == [r.losses for r in tiny_lab.runs]


class _SlowWorker:
    """A stand-in for the worker: counts runs and takes a moment."""

    def __init__(self, result: LabResult) -> None:
        self.result, self.calls = result, 0

    def call(self, fn, config, *, timeout_s, on_progress):
        self.calls += 1
        for k in range(1, 4):
            time.sleep(0.1)
            on_progress(k, 3)
        return self.result


def test_thirty_visitors_cost_one_run(tiny_lab) -> None:
    """Visitors asking for a configuration in training follow that run."""
    worker = _SlowWorker(tiny_lab)
    lab = Lab(worker)  # type: ignore[arg-type]
    results = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(lab.train(TINY, f"s{i}")))
        for i in range(30)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert worker.calls == 1 and len(results) == 30
    assert all(r is tiny_lab for r in results)


def test_a_run_waits_its_turn_and_a_second_ask_is_refused(tiny_lab) -> None:
    """While another visitor's run is at the front, a visitor waits first in line; the same
    visitor asking again meanwhile is refused with a message."""
    lab = Lab(_SlowWorker(tiny_lab))  # type: ignore[arg-type]
    places = []

    def leave(place: int) -> None:
        places.append(place)
        raise KeyboardInterrupt  # the visitor leaves the line

    with front_of_line_held("teacher"):
        with pytest.raises(KeyboardInterrupt):
            lab.train(TINY, "student", on_wait=leave)
        with pytest.raises(BusyError):
            lab.train(TINY, "teacher")
    assert places == [1]
    assert lab.train(TINY, "student") is tiny_lab  # the line is empty again


class _StoppedWorker:
    """A stand-in for a worker whose run passed the time cap."""

    def call(self, fn, config, *, timeout_s, on_progress):
        raise worker.TimedOut(f"it passed its {timeout_s:g} s limit and was stopped")


def test_a_run_past_the_time_cap_gives_a_message_and_frees_the_config() -> None:
    lab = Lab(_StoppedWorker())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="did not finish: it passed its 90 s limit"):
        lab.train(TINY, "visitor")
    assert lab.cached(TINY) is None and not lab._flights  # the next ask runs it again


def test_the_cache_is_bounded_and_keeps_the_recently_used(tiny_lab) -> None:
    """Seeds 0 and 1 fill a cache of two; asking for seed 0 again (train, as a visitor does)
    makes seed 1 the least recently used, so seed 2 pushes seed 1 out."""
    lab = Lab(_SlowWorker(tiny_lab), cache_size=2)  # type: ignore[arg-type]
    configs = [TrainConfig(variants=("pre",), layers=1, steps=20, seed=seed) for seed in range(3)]
    lab.train(configs[0], "v")
    lab.train(configs[1], "v")
    lab.train(configs[0], "v")
    lab.train(configs[2], "v")
    assert lab.worker.calls == 3
    assert [lab.cached(c) is not None for c in configs] == [True, False, True]


def test_the_script_reproduces_the_run(tmp_path, tiny_lab) -> None:
    """The exported script, run alone, prints the same final losses, to the last bit."""
    script = tmp_path / "lab_run.py"
    script.write_text(training_script(TINY))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
    )
    printed = [json.loads(line) for line in out.stdout.splitlines()]
    assert [p["variant"] for p in printed] == ["post", "pre"]
    assert [p["final_loss"] for p in printed] == [r.losses[-1] for r in tiny_lab.runs]


# ---------------------------------------------------------------- predict before you see


def _wrongs(q: Question) -> dict[str, float | str]:
    return {w.misconception: w.answer for w in q.wrong}


def _asked_live(q: Question) -> None:
    """Every option names its group, each wrong one its misconception, and a class can
    answer it by tapping (two options at least)."""
    groups = {o: diagnose(q, o).group for o in options(q)}
    assert list(groups.values()).count(RIGHT) == 1
    for w in q.wrong:
        shown = w.answer if isinstance(w.answer, str) else fmt(w.answer)
        assert groups[shown] == w.misconception
        assert diagnose(q, shown).message.startswith(MISCONCEPTIONS[w.misconception].name)
    live = live_question(q, "training")
    assert live is not None and len(live.options) >= 2


def test_the_gradient_question_reads_the_run(tiny_lab) -> None:
    """Post-LN's last-block norm; wrong: pre-LN's (placement), and with more blocks post-LN's
    block 1 (uniform across depth). 3 blocks: the same seed's gradients at depth 3."""
    post, pre = tiny_lab.run("post"), tiny_lab.run("pre")
    q = grads_question(tiny_lab)
    assert q.answer == post.grad_norms[-1]
    assert _wrongs(q) == {"placement_irrelevant": pre.grad_norms[-1]}  # one block: no block 1
    _asked_live(q)
    deep = {v: tiny_lab.depth_grads[v][2] for v in ("post", "pre")}
    three = dataclasses.replace(
        tiny_lab,
        config=dataclasses.replace(TINY, layers=3),
        runs=tuple(dataclasses.replace(r, grad_norms=deep[r.variant]) for r in tiny_lab.runs),
    )
    q3 = grads_question(three)
    assert q3.answer == deep["post"][2] and q3.qid != q.qid
    assert _wrongs(q3) == {
        "placement_irrelevant": deep["pre"][2],
        "post_ln_uniform": deep["post"][0],
    }
    _asked_live(q3)
    assert grads_question(dataclasses.replace(tiny_lab, runs=tiny_lab.runs[1:])) is None


def test_the_depth_question_reads_the_run(tiny_lab) -> None:
    """Post over pre, last block, 8 blocks; wrong: 1 (placement), the one-block ratio."""
    post, pre = tiny_lab.depth_grads["post"], tiny_lab.depth_grads["pre"]
    q = depth_question(tiny_lab)
    assert q.answer == post[-1][-1] / pre[-1][-1]
    assert _wrongs(q) == {"placement_irrelevant": 1.0, "post_ln_uniform": post[0][-1] / pre[0][-1]}
    assert fmt(q.answer) not in q.prompt
    _asked_live(q)


@pytest.fixture(scope="module")
def batch_lab(tiny_lab, batch_norms) -> LabResult:
    """The tiny run with naive and masked Batch Norm's 50% padding runs in its place."""
    return dataclasses.replace(
        tiny_lab,
        config=dataclasses.replace(TINY, variants=("bn", "mbn")),
        runs=(batch_norms["bn", 0.5], batch_norms["mbn", 0.5]),
    )


def test_the_batch_norm_question_reads_the_run(batch_lab, batch_norms) -> None:
    """Naive Batch Norm's variance varies more (measured: 10.2% against 4.1%); wrong: "the
    same" (Batch Norm ignores padding). Without padding the two are equal: "the same" is right,
    and no misconception is left to offer."""
    q = batch_question(batch_lab)
    assert q.answer == label("bn") and _wrongs(q) == {"bn_ignores_padding": SAME}
    naive, masked = batch_lab.runs
    for run in (naive, masked):
        assert f"{100 * fluctuation(run.bn_var):.1f}%" in q.explanation
    _asked_live(q)
    unpadded = (batch_norms["bn", 0.0], batch_norms["mbn", 0.0])
    q0 = batch_question(dataclasses.replace(batch_lab, runs=unpadded))
    assert q0.answer == SAME and not q0.wrong and len(options(q0)) == 3
    assert batch_question(dataclasses.replace(batch_lab, runs=(naive,))) is None


def test_the_gap_question_reads_the_run(batch_lab, tiny_lab) -> None:
    """Naive Batch Norm's gap is the larger (measured: -0.0097 against +0.0045); wrong: no gap
    (evaluation uses the batch's own statistics). Layer Norm alone: no gap is right."""
    q = gap_question(batch_lab)
    assert q.answer == label("bn") and _wrongs(q) == {"running_is_batch": NO_GAP}
    assert q.choices == (label("bn"), label("mbn"), NO_GAP)
    _asked_live(q)
    q_ln = gap_question(tiny_lab)
    assert q_ln.answer == NO_GAP and not q_ln.wrong and len(options(q_ln)) == 3


def test_questions_ask_before_the_result(tiny_lab, batch_lab) -> None:
    """The slides with a question keep their result (the finding) until it is answered: the
    explanation and the question shown first do not hold the answer."""
    for config, result in ((TINY, tiny_lab), (batch_lab.config, batch_lab)):
        lesson = slides(config, result)
        asked = [s for s in lesson.sections if s.question is not None]
        assert asked and all(s.finding for s in asked)
        for s in asked:
            answer = s.question.answer
            if not isinstance(answer, str):
                assert fmt(answer) not in s.explanation + s.question.prompt
    keys = lambda r, c: [s.key for s in slides(c, r).sections if s.question]  # noqa: E731
    assert keys(tiny_lab, TINY) == [GRADS, DEPTH, GAP]
    assert keys(batch_lab, batch_lab.config) == [DEPTH, BATCH, GAP]


@needs_cuda
def test_gpu_training_matches_the_cpu() -> None:
    """The same run on the GPU: losses within 1e-3 of the CPU's (float32, other kernels)."""
    cpu = train_variant("pre", 2, 1e-3, True, 0.5, 20, 0)
    gpu = train_variant("pre", 2, 1e-3, True, 0.5, 20, 0, device="cuda")
    assert max(abs(a - b) for a, b in zip(cpu.losses, gpu.losses, strict=True)) < 1e-3
