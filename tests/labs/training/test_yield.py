"""A training piece under way ends early once someone waits for the heavy-work line (issue 38:
a bystander's benchmark waited for the whole piece under way, up to PIECE_S, 3x its idle time):
the piece stops after the step under way, the benchmark goes first, and the run goes on from
that step to the same bits as a run never interrupted.

Where a piece stops is asked before each of its steps (Trainer.advance's `stop`); in the worker
that is worker.yield_asked, which the server's watch on the line (heavy_work.Turn.yielding) sets
through Worker.ask_yield. With nobody waiting, nothing stops a piece early: the worker's pieces
are the ones its steps and time make (test_training's test_the_worker_gives_the_same_numbers_once
counts them).
"""

from __future__ import annotations

import dataclasses
import threading
import time

import pytest
import torch

from lnlab.core.backend import cpu_threads
from lnlab.labs.training.config import MAX_LAYERS, TrainConfig
from lnlab.labs.training.run import depth_grads, recipes, run_lab
from lnlab.labs.training.train import Recipe, Trainer
from lnlab.labs.training.worker import Grads, Lab, Progress, grads_piece, piece_steps
from lnlab.serving import heavy_work, worker


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """As the lab's runs: one CPU thread, the same bits as in the worker."""
    with cpu_threads(1):
        yield


def wait_until(condition, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def same_bits(a: Trainer, b: Trainer) -> bool:
    """Every weight, running statistic and Adam moment equal to the bit, and the numbers so far."""
    model_a, model_b = a.model.state_dict(), b.model.state_dict()
    if model_a.keys() != model_b.keys():
        return False
    if not all(torch.equal(model_a[k], model_b[k]) for k in model_a):
        return False
    moments_a, moments_b = a.optimizer.state_dict()["state"], b.optimizer.state_dict()["state"]
    for k in moments_a:
        if not all(torch.equal(v, moments_b[k][n]) for n, v in moments_a[k].items()):
            return False
    return a.losses == b.losses and a.variances == b.variances


@pytest.mark.parametrize("variant", ["post", "bn", "mbn"])
def test_a_training_stopped_where_asked_gives_the_same_bits(variant: str) -> None:
    """Asked to stop before steps 4, 5, 11 and 23 (one step at least a piece: the piece that
    starts at 4 takes step 5 before it is asked), each piece saved and resumed from bytes as
    in the worker: the pieces end where asked, and the training is bit for bit the
    uninterrupted one (Batch Norm's running statistics and the data generator included)."""
    recipe = Recipe(variant, 2, 1e-2, True, 0.5, 30, 3)
    whole = Trainer(recipe)
    whole.advance(30)
    asked, ends = {4, 5, 11, 23}, []
    trainer = Trainer(recipe)
    while trainer.done < recipe.steps:
        trainer.advance(recipe.steps, stop=lambda t=trainer: t.done in asked)
        ends.append(trainer.done)
        if trainer.done < recipe.steps:
            trainer = Trainer.resume(recipe, trainer.state())
    assert ends == [4, 5, 11, 23, 30]
    assert same_bits(trainer, whole)
    assert dataclasses.replace(trainer.result(), seconds=0) == dataclasses.replace(
        whole.result(), seconds=0
    )


def test_no_ask_no_early_stop_and_one_step_at_least() -> None:
    """A stop that never says so (nobody waits) changes nothing: the piece runs to `until`;
    one that always says so still takes one step, so a run always moves on."""
    recipe = Recipe("pre", 1, 1e-2, True, 0.0, 12, 5)
    trainer = Trainer(recipe)
    trainer.advance(10, stop=lambda: False)
    assert trainer.done == 10
    trainer.advance(12, stop=lambda: True)
    assert trainer.done == 11


def test_the_depth_gradients_stopped_where_asked_give_the_same_bits(monkeypatch) -> None:
    """The depth gradients' piece (a model per depth, post-LN and pre-LN) asked to yield before
    every third depth: it ends there (one depth at least), the next goes on from the depths
    it left, and together they are run.depth_grads to the bit; unasked, one piece does all."""
    whole = depth_grads(4, 0.25)
    assert grads_piece(4, 0.25) == Grads(4, 0.25, whole)
    asks = iter(range(1, 1000))
    monkeypatch.setattr(worker, "yield_asked", lambda: next(asks) % 3 == 0)
    piece, pieces = grads_piece(4, 0.25), 1
    while not piece.done:
        assert 0 < sum(map(len, piece.grads.values())) < 2 * MAX_LAYERS
        piece, pieces = grads_piece(4, 0.25, piece.grads), pieces + 1
    assert pieces > 2 and piece == Grads(4, 0.25, whole)


class Pressing(worker.Worker):
    """The real worker, with a benchmark that joins the heavy-work line just before the depth
    gradients' piece (`before_grads`)."""

    def __init__(self, before_grads) -> None:
        super().__init__()
        self.before_grads = before_grads

    def call(self, fn, *args, **kwargs):
        if fn is grads_piece:
            self.before_grads()
        return super().call(fn, *args, **kwargs)


def test_a_benchmark_pressed_mid_piece_stops_it_within_steps_and_the_run_keeps_its_bits() -> None:
    """The real worker and line: a run whose trainings are one piece each (150 steps, no time
    bound); a benchmark joins the heavy-work line at the first training's step 15: the piece
    stops a few steps later (at most the steps the worker takes while the ask travels: the
    join, the watch's read of the line, shared memory), the benchmark has the front, then the
    run goes on. Another joins as the depth gradients' piece starts: that piece does one
    depth, the benchmark goes first, the next piece does the rest. The run's result is bit
    for bit the one trained in this process at once."""
    config = TrainConfig(variants=("post",), layers=1, steps=150, seed=11)
    assert piece_steps(config.layers) >= config.steps  # without a waiter: one piece each
    first, key = recipes(config)[0], (config.seed, config.padding)
    joined: list[int] = []  # the step reported when the benchmark joined
    at_front: list[object] = []  # where the run stood when each benchmark ran

    def benchmark(name: str, where) -> None:
        def run() -> None:
            with heavy_work.front(name), lab._lock:
                at_front.append(where())

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        wait_until(lambda: heavy_work.place(name) is not None)
        benches.append(thread)

    def during_grads() -> None:
        if not lab._grads_part:
            benchmark("second", lambda: lab._grads_part[key])

    benches: list[threading.Thread] = []
    lab = Lab(Pressing(during_grads), piece_s=None)

    def on_progress(progress: Progress) -> None:
        if not joined and progress.done >= 15:
            joined.append(progress.done)
            benchmark("first", lambda: lab._legs[first].done)

    try:
        result = lab.train(config, "trainer", on_progress)
    finally:
        for thread in benches:
            thread.join(30)
        lab.worker.stop()
    print(f"joined at step {joined}, the piece ended at step {at_front[0]}")
    assert len(joined) == 1 and len(at_front) == 2
    assert joined[0] <= at_front[0] < joined[0] + 30 < config.steps  # a few steps, not the piece
    part = at_front[1]
    assert isinstance(part, Grads) and not part.done
    assert [len(part.grads[v]) for v in ("post", "pre")] == [1, 0]  # one depth: it waited already
    assert lab.pieces == 2 + 1 + 2  # the first training in two pieces, the second in one, grads
    reference = run_lab(config)
    for ours, theirs in zip(
        (*result.runs, result.warmup_on, result.warmup_off),
        (*reference.runs, reference.warmup_on, reference.warmup_off),
        strict=True,
    ):
        assert dataclasses.replace(ours, seconds=0) == dataclasses.replace(theirs, seconds=0)
    assert result.depth_grads == reference.depth_grads


def test_the_worker_imports_what_a_first_optimizer_needs_before_it_is_ready() -> None:
    """torch.optim's first optimizer imports torch._dynamo (1.5 s here): a run's first piece
    in a fresh worker held the worker that long before its first step, with no step to yield
    at (hostile student test 5's benchmark took 3-4 s beside the trainings, 0.5 s idle). The
    heavy-work worker imports it as it starts."""
    assert "torch._dynamo" in worker.HEAVY.preload
