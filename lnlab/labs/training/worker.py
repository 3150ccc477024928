"""Training runs off the server's process, in pieces, one run at a time, each configuration once.

A run takes seconds of CPU; in the server's process it would hold the GIL and stall every
visitor. So runs go to the server's heavy-work process (lnlab.serving.worker.HEAVY, which the GPU
benchmark uses too: the two wait in one line), and the server's thread only waits,
passing on the progress the run reports.

Runs are admitted one at a time, first come first, and each goes on to its end
(heavy_work.training_front: a line of its own, shared by every server process, bounded, one
place for each visitor). Ten runs that shared the machine piece by piece each finished only
after all ten, and since the trainings they had left part-way were dropped to keep memory
bounded, none finished (issue 38). A run waiting in that line is told its place and the
expected seconds of the runs ahead (`cost_s`: the work left, at the pace measured here), and
the run at the front keeps that estimate of what it has left up to date.

A run is cut into pieces of at most PIECE_WORK blocks x steps and PIECE_S seconds (whichever
comes first: the time bound holds on a loaded machine): each piece resumes one variant's
training where the last stopped (lnlab.labs.training.train.Trainer, to the same bits) and is
one job in the worker. Between pieces the run lets anyone waiting
in the heavy-work line go first (heavy_work.Turn.share), so a benchmark waits for one piece,
not for a whole run; and a piece under way ends early, after its step under way (a training's
step, or one depth of the depth gradients: a few ms to tens of ms), as soon as someone waits in
that line (heavy_work.Turn.yielding tells the worker, worker.Worker.ask_yield; the piece checks
worker.yield_asked before each step), so a benchmark waits for a step, not for a piece (issue
38: it waited up to PIECE_S, 3x its idle time). The run goes on from that step as from any
piece's end, to the same bits.

Thirty students opening the teacher's link cost one run: finished results are cached per
configuration (bounded, shared by every session), and a visitor asking for a configuration
that is already training (or waiting to) follows that run's progress instead of queueing
another; if the visitor running it leaves, a follower takes over from the last finished piece.
Every piece is kept under its recipe, so configurations that share a training (post-LN with
warm-up, say) train it once, and a run stopped half-way goes on from where it stopped. A
training part-way is never dropped while a run in progress or waiting in line needs it; once
none does (its visitor left), it is kept for PART_WAY_KEEP_S at least, unless more than
PART_WAY_MAX are. Every result is checked to be the one its key asked for before it is kept or
served.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from lnlab.core.backend import cpu_threads
from lnlab.core.errors import BusyError, InputError
from lnlab.labs.training.config import MAX_LAYERS, TrainConfig
from lnlab.labs.training.data import make_batch
from lnlab.labs.training.run import LabResult, assemble, recipes
from lnlab.labs.training.train import BATCH, Recipe, Trainer, VariantRun, build, layer_grad_norms
from lnlab.serving import heavy_work, worker

PIECE_WORK = 480  # blocks x steps in one piece at most: about 1.5-2 s on one shared thread
PIECE_S = 2.0  # and a piece stops after the step that passes this (or sooner: someone waits)
PIECE_CAP_S = 30.0  # a piece past this is stopped with its worker
REPORTS = 50  # progress messages per variant, at most
CACHE_SIZE = 32  # finished configurations kept
LEGS_KEPT = 96  # finished trainings kept (their numbers), besides those a run needs
# Part-way trainings (their state, < 1.3 MB each) that no run in progress or in line needs:
PART_WAY_KEPT = 8  # these many are kept whatever their age (the least recently used go first)
PART_WAY_KEEP_S = 600.0  # more are kept this long after their run stopped ...
PART_WAY_MAX = 32  # ... unless there are more than this many
# A run's expected seconds at the front (for the runs waiting behind it): its blocks x steps at
# the pace of the latest runs here, their pieces' whole time in the worker and their waits for
# others' heavy work between pieces included, the depth gradients' time, and a run's own time
# besides (the lines, the pieces' bookkeeping).
RATE_S = 0.006  # seconds per block x step (pieces on a shared core, with what goes between
# them: bench.training_crowd measured 0.0068), weighing as PRIOR_WORK of them, ...
PRIOR_WORK = 120  # ... against the pieces timed since, each weighing as its blocks x steps ...
PACE_DECAY = 0.8  # ... times this for each piece after it (about the latest run's worth)
GRADS_S = 0.5  # seconds for the depth gradients, until one has been timed
RUN_S = 0.5  # a run's time at the front besides its pieces and waits, until one has been timed
ESTIMATE_WEIGHT = 0.3  # weight of the newest time in the running estimates of those two
FOLLOW_S = 0.25  # how often a visitor following another's run looks at its progress
PACE_MIN_S = 0.5  # steps timed before the time left is estimated

OnWait = heavy_work.OnWait


@dataclass(frozen=True)
class Progress:
    """Where a run stands: steps trained of all its trainings, the training time left (from
    this run's pace; None before its first step; while it waits to start, the estimate of its
    whole run), and its place in line: in the line to train (`queued`, with the expected wait
    `wait_s`) or, between pieces, in the heavy-work line."""

    done: int
    total: int
    left_s: float | None = None
    place: int = 0  # 0 while it trains or is about to; 1.. while others' work goes first
    queued: bool = False  # waiting in the line to train, behind other runs
    wait_s: float | None = None  # the expected wait to start, while queued

    @property
    def share(self) -> float:
        return min(1.0, self.done / max(self.total, 1))

    def text(self) -> str:
        """The progress bar's text: "37 of 750 steps, about 12 s of training left"."""
        steps = f"{self.done:,} of {self.total:,} steps"
        if self.queued and self.place:
            place = heavy_work.ordinal(self.place)
            wait = "" if self.wait_s is None else f", about {heavy_work.seconds(self.wait_s)}"
            text = f"{steps}; waiting for the runs ahead ({place} in line{wait})"
            if self.left_s is None:
                return text
            return f"{text}, then about {heavy_work.seconds(self.left_s)} of training"
        if self.place:
            place = heavy_work.ordinal(self.place)
            return f"{steps}; paused while others' heavy work runs ({place} in line)"
        if self.left_s is None:
            return f"{steps}, starting..."
        return f"{steps}, about {self.left_s:.0f} s of training left"


OnProgress = Callable[[Progress], None]


def piece_steps(layers: int) -> int:
    """Steps in one piece: PIECE_WORK blocks x steps, at least one step."""
    return max(1, PIECE_WORK // layers)


@dataclass(frozen=True)
class Leg:
    """One training after `done` of its steps: the state to go on from, or, once every step is
    done, its run. Crosses between the worker and the server."""

    recipe: Recipe
    done: int
    state: bytes = b""
    run: VariantRun | None = None


def train_piece(recipe: Recipe, state: bytes, until: int, budget_s: float | None) -> Leg:
    """The worker's job: go on with `recipe`'s training from `state` (b"": from the start) up
    to step `until` or for `budget_s`, or until the server asks the job to yield (someone waits
    for the worker: worker.yield_asked, one step at least), reporting the step reached about
    REPORTS times per training."""
    every = max(1, recipe.steps // REPORTS)

    def step(k: int) -> None:
        if k == until or k % every == 0:
            worker.report(k)

    with cpu_threads(1):  # as the exported script: the same numbers to the bit
        trainer = Trainer.resume(recipe, state) if state else Trainer(recipe)
        trainer.advance(until, step, budget_s, stop=worker.yield_asked)
        if trainer.done < recipe.steps:
            return Leg(recipe, trainer.done, trainer.state())
        return Leg(recipe, trainer.done, run=trainer.result())


@dataclass(frozen=True)
class Grads:
    """The depth gradients of one seed and padding share, with that key; part-way (`done`
    False: a piece that yielded), the depths done so far, from 1."""

    seed: int
    padding: float
    grads: dict[str, tuple[tuple[float, ...], ...]]
    done: bool = True


GRADS_VARIANTS = ("post", "pre")  # run.depth_grads's, in its order


def grads_piece(
    seed: int, padding: float, have: dict[str, tuple[tuple[float, ...], ...]] | None = None
) -> Grads:
    """The worker's job: post-LN's and pre-LN's gradients at initialisation at every depth
    (run.depth_grads, to the bit: each depth is its own model), going on from the depths in
    `have`; it ends after the depth under way (part-way, one depth at least) when the server
    asks it to yield (worker.yield_asked)."""
    norms = {v: list((have or {}).get(v, ())) for v in GRADS_VARIANTS}
    with cpu_threads(1):
        batch = make_batch(torch.Generator().manual_seed(seed + 1), BATCH, padding)
        first = True
        for variant, done in norms.items():
            while len(done) < MAX_LAYERS:
                if not first and worker.yield_asked():
                    return Grads(seed, padding, {v: tuple(n) for v, n in norms.items()}, False)
                first = False
                done.append(layer_grad_norms(build(variant, len(done) + 1, seed), batch))
    return Grads(seed, padding, {v: tuple(n) for v, n in norms.items()})


@dataclass
class _Flight:
    """A run in progress, followed by every visitor who asked for its configuration."""

    done: threading.Event = field(default_factory=threading.Event)
    progress: Progress = Progress(0, 1)
    result: LabResult | None = None
    error: str = ""  # empty with no result: the visitor running it left


@dataclass
class _Pace:
    """This run's own training: steps and the seconds they took, for the time left, pieces
    and the starts of pieces included, except the run's first start: timed from the first
    piece's first report, not from its start (the worker starting, torch loading), which
    counted in made the first estimate hundreds of seconds for a run of 15."""

    steps: int = 0
    seconds: float = 0.0

    def left_s(self, steps_left: int) -> float | None:
        """None until PACE_MIN_S of steps have been timed (an estimate from one or two steps
        swings by a factor of ten)."""
        if self.seconds < PACE_MIN_S or not self.steps:
            return None
        return self.seconds / self.steps * steps_left


class Lab:
    """Cached, shared, piece-by-piece training runs (one instance per server: LAB)."""

    def __init__(
        self,
        runner: worker.Worker | None = None,
        cache_size: int = CACHE_SIZE,
        piece_s: float | None = PIECE_S,
        max_wait_s: float = heavy_work.MAX_WAIT_S,
        line_wait_s: float = heavy_work.TRAINING_MAX_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.worker = runner or worker.HEAVY  # shared with the GPU benchmark
        self.cache_size = cache_size
        self.piece_s = piece_s  # None: pieces bounded by PIECE_WORK alone
        self.max_wait_s = max_wait_s  # in the heavy-work line, before a piece
        self.line_wait_s = line_wait_s  # expected, in the line to train (heavy_work.training_front)
        self.clock = clock  # for how long part-way trainings are kept
        self._lock = threading.Lock()
        self._cache: OrderedDict[TrainConfig, LabResult] = OrderedDict()
        self._legs: OrderedDict[Recipe, Leg] = OrderedDict()
        self._touched: dict[Recipe, float] = {}  # when each leg was kept, or its run stopped
        self._pinned: Counter[Recipe] = Counter()  # trainings of the runs in progress or in line
        self._grads: OrderedDict[tuple[int, float], Grads] = OrderedDict()
        self._grads_part: OrderedDict[tuple[int, float], Grads] = OrderedDict()  # yielded
        self._flights: dict[TrainConfig, _Flight] = {}
        self.rate_s = RATE_S  # seconds per block x step, as measured lately (see _time)
        self._timed = (0.0, 0.0)  # seconds and blocks x steps of the latest pieces, decaying
        self.grads_s = GRADS_S  # seconds for the depth gradients, measured
        self.run_s = RUN_S  # a run's seconds at the front besides its pieces and waits, measured
        self.runs_started = 0  # runs that reached the front of the line: the cache's test
        self.pieces = 0  # jobs sent to the worker

    def cached(self, config: TrainConfig) -> LabResult | None:
        """The finished result for `config`, or None."""
        with self._lock:
            return self._hit(config)

    def _hit(self, config: TrainConfig) -> LabResult | None:
        """The cached result, now the most recently used, or None (call with the lock held).
        A result kept under another configuration's key is dropped, never served."""
        result = self._cache.get(config)
        if result is not None and result.config != config:
            del self._cache[config]
            return None
        if result is not None:
            self._cache.move_to_end(config)
        return result

    def cost_s(self, config: TrainConfig) -> float:
        """About how long `config`'s run takes at the front: the steps its trainings still
        need (what is kept counts as done) x blocks, at the measured pace, the depth
        gradients unless kept, and a run's own time."""
        with self._lock:
            work = 0
            for recipe in recipes(config):
                leg = self._legs.get(recipe)
                if leg is None or leg.run is None:
                    work += (recipe.steps - (leg.done if leg else 0)) * recipe.layers
            grads = (config.seed, config.padding) not in self._grads
            return work * self.rate_s + (self.grads_s if grads else 0.0) + self.run_s

    def train(
        self,
        config: TrainConfig,
        owner: str,
        on_progress: OnProgress | None = None,
        on_wait: OnWait | None = None,
    ) -> LabResult:
        """`config`'s result: cached, followed from a run in progress (or in line), or run
        after the runs ahead of it in the line to train.

        `on_wait(place, expected_s)` is called while the run waits in that line, and between
        pieces while others' heavy work goes first. Raises InputError when the run fails, and
        BusyError (an InputError) when a line refuses it (full, too long a wait, or this
        visitor's other run in it).
        """
        report = on_progress or (lambda progress: None)
        while True:
            with self._lock:
                if (hit := self._hit(config)) is not None:
                    return hit
                flight = self._flights.get(config)
                if flight is None:
                    flight = self._flights[config] = _Flight()
                    self._pinned.update(recipes(config))
                    break
            while not flight.done.wait(FOLLOW_S):
                report(flight.progress)
            if flight.result is not None:
                return flight.result
            if flight.error:
                raise InputError(flight.error)
            # the visitor running it left: this one goes on from its last finished piece
        try:
            flight.result = self._run(config, owner, flight, report, on_wait)
            with self._lock:
                self._cache[config] = flight.result
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
            return flight.result
        except InputError as err:
            flight.error = str(err)
            raise
        finally:
            with self._lock:
                del self._flights[config]
                self._unpin(config)
            flight.done.set()

    def _unpin(self, config: TrainConfig) -> None:
        """`config`'s run no longer needs its trainings: what it left part-way is kept from now
        on as any other (see _keep). Call with the lock held."""
        now = self.clock()
        self._pinned.subtract(recipes(config))
        for recipe in recipes(config):
            if self._pinned[recipe] <= 0:
                del self._pinned[recipe]
                if recipe in self._legs:
                    self._legs.move_to_end(recipe)
                    self._touched[recipe] = now

    def _run(
        self,
        config: TrainConfig,
        owner: str,
        flight: _Flight,
        report: OnProgress,
        on_wait: OnWait | None,
    ) -> LabResult:
        """Wait for the front of the line to train, then train what `config` still needs, a
        piece at a time, each at the front of the heavy-work line."""
        needed = recipes(config)
        total = len(needed) * config.steps
        pace = _Pace()
        runs: dict[Recipe, VariantRun] = {}
        grads: list[Grads] = []
        admitted: list[heavy_work.Turn] = []  # the run's turn at the front of the line to train

        def show(done: int, place: int = 0) -> None:
            left = pace.left_s(total - done)
            flight.progress = Progress(done, total, left, place)
            report(flight.progress)
            if admitted and left is not None:  # for the runs waiting behind it
                admitted[0].estimate(left + (0.0 if grads else self.grads_s))

        def queued(place: int, expected_s: float | None) -> None:
            done = self._kept_steps(needed, runs)
            flight.progress = Progress(
                done, total, self.cost_s(config), place, queued=True, wait_s=expected_s
            )
            report(flight.progress)
            if on_wait is not None:
                on_wait(place, expected_s)

        def waiting(place: int, expected_s: float | None) -> None:
            show(flight.progress.done, place)
            if on_wait is not None:
                on_wait(place, expected_s)

        line = heavy_work.training_front(
            owner, cost=lambda: self.cost_s(config), on_wait=queued, max_wait_s=self.line_wait_s
        )
        with (
            line as to_train,
            heavy_work.front(owner, on_wait=waiting, max_wait_s=self.max_wait_s) as turn,
        ):
            admitted.append(to_train)
            self.runs_started += 1
            first, pieces_s = True, 0.0  # the time in pieces and waits between them
            while (piece := self._next_piece(config, runs, grads)) is not None:
                start = time.monotonic()
                if not first:  # whoever waits goes first; then the front is ours again
                    self._share(turn)
                    self._time(time.monotonic() - start, 0)  # a wait the runs in line share
                first = False
                if piece == "grads":
                    if (done := self._grads_piece(config, turn)) is not None:
                        grads.append(done)  # else part-way: the next piece goes on
                else:
                    self._train_piece(piece, needed, runs, pace, show, turn)
                pieces_s += time.monotonic() - start
            if pieces_s:  # the rest of its time at the front: the next run's estimate
                self.run_s = _blend(self.run_s, time.monotonic() - to_train.since - pieces_s)
        result = assemble(config, runs, grads[0].grads)
        if result.config != config:  # cannot happen; never cache another key's result
            raise InputError("The training run's result was not for these settings; try again.")
        return result

    @staticmethod
    def _share(turn: heavy_work.Turn) -> None:
        try:
            turn.share()
        except BusyError as err:  # waited too long between two pieces
            raise BusyError(
                f"{err} The pieces already trained are kept: press Train to go on from there."
            ) from err

    def _kept_steps(self, needed: tuple[Recipe, ...], runs: dict[Recipe, VariantRun]) -> int:
        """The steps of `needed` trained already: in `runs`, or kept finished or part-way."""
        with self._lock:
            return sum(
                r.steps if r in runs else self._legs[r].done if r in self._legs else 0
                for r in needed
            )

    def _next_piece(
        self, config: TrainConfig, runs: dict[Recipe, VariantRun], grads: list[Grads]
    ) -> Recipe | str | None:
        """The next training that `config` lacks, then "grads" for its depth gradients; None
        once it has everything. What is found kept is taken into `runs` and `grads`."""
        with self._lock:
            for recipe in recipes(config):
                if recipe in runs:
                    continue
                leg = self._legs.get(recipe)
                if leg is None or leg.run is None:
                    return recipe
                runs[recipe] = leg.run
                self._legs.move_to_end(recipe)
            if not grads and (kept := self._grads.get((config.seed, config.padding))):
                grads.append(kept)
            return None if grads else "grads"

    def _train_piece(
        self,
        recipe: Recipe,
        needed: tuple[Recipe, ...],
        runs: dict[Recipe, VariantRun],
        pace: _Pace,
        show: Callable[[int], None],
        turn: heavy_work.Turn | None = None,
    ) -> None:
        """One piece of `recipe`'s training in the worker, from where it was left; it ends
        early once someone waits for the front of `turn`'s line (Turn.yielding)."""
        with self._lock:
            leg = self._legs.get(recipe) or Leg(recipe, 0)
        before = self._kept_steps(needed, runs)
        until = min(recipe.steps, leg.done + piece_steps(recipe.layers))
        steps_before, seconds_before = pace.steps, pace.seconds
        # timed from: (when, step); the run's first piece from its first report (see _Pace)
        since: list[tuple[float, int]] = [] if not pace.steps else [(time.monotonic(), leg.done)]

        def timed(k: int) -> None:
            now = time.monotonic()
            if not since:
                since.append((now, k))
            pace.steps = steps_before + k - since[0][1]
            pace.seconds = seconds_before + now - since[0][0]

        def step(k: int) -> None:
            timed(k)
            show(before + k - leg.done)

        show(before)
        self.pieces += 1
        starts, start = getattr(self.worker, "started", 0), time.monotonic()
        with self._yielding(turn):
            new = self._call(train_piece, recipe, leg.state, until, self.piece_s, on_progress=step)
        if new.recipe != recipe or not leg.done < new.done <= until:  # never keep another's
            raise InputError("A piece of the training run came back for other settings; try again.")
        if getattr(self.worker, "started", 0) == starts:  # a worker's start is no pace
            self._time(time.monotonic() - start, (new.done - leg.done) * recipe.layers)
        with self._lock:
            self._keep(new)
        if new.run is not None:
            runs[recipe] = new.run
        timed(new.done)
        show(before + new.done - leg.done)

    def _time(self, seconds: float, work: int) -> None:
        """Fold a piece's seconds and blocks x steps (or a wait between pieces: no work) into
        the pace of the latest pieces."""
        with self._lock:
            total_s, total_work = self._timed
            decay = PACE_DECAY if work else 1.0
            total_s, total_work = total_s * decay + seconds, total_work * decay + work
            self._timed = (total_s, total_work)
            self.rate_s = (total_s + RATE_S * PRIOR_WORK) / (total_work + PRIOR_WORK)

    def _keep(self, leg: Leg) -> None:
        """Keep `leg` as its recipe's latest. Part-way trainings that no run in progress or in
        line needs are dropped, the least recently used first, past PART_WAY_KEPT once older
        than PART_WAY_KEEP_S, and past PART_WAY_MAX whatever their age; finished ones past
        LEGS_KEPT. Call with the lock held."""
        now = self.clock()
        self._legs[leg.recipe] = leg
        self._legs.move_to_end(leg.recipe)
        self._touched[leg.recipe] = now
        free = [r for r, kept in self._legs.items() if kept.run is None and not self._pinned[r]]
        for k, recipe in enumerate(free):  # the least recently used first
            left = len(free) - k
            if left <= PART_WAY_KEPT:
                break
            if left <= PART_WAY_MAX and now - self._touched[recipe] < PART_WAY_KEEP_S:
                break  # and the ones after it are younger
            self._drop(recipe)
        done = [r for r, kept in self._legs.items() if kept.run is not None and not self._pinned[r]]
        for recipe in done[: max(0, len(done) - LEGS_KEPT)]:
            self._drop(recipe)

    def _drop(self, recipe: Recipe) -> None:
        del self._legs[recipe]
        self._touched.pop(recipe, None)

    def _yielding(self, turn: heavy_work.Turn | None) -> contextlib.AbstractContextManager:
        """For a piece in the worker: ask it to yield once someone waits for the front of
        `turn`'s line (Turn.yielding, Worker.ask_yield)."""
        ask = getattr(self.worker, "ask_yield", None)  # a stand-in worker may have none
        return turn.yielding(ask) if turn is not None and ask else contextlib.nullcontext()

    def _grads_piece(
        self, config: TrainConfig, turn: heavy_work.Turn | None = None
    ) -> Grads | None:
        """The depth gradients in the worker, going on from those a piece that yielded left:
        complete (kept), or None when this piece yielded too (what it did is kept part-way)."""
        key = (config.seed, config.padding)
        with self._lock:
            part = self._grads_part.get(key)
        self.pieces += 1
        starts = getattr(self.worker, "started", 0)
        start = time.monotonic()
        with self._yielding(turn):
            grads = self._call(grads_piece, *key, *(() if part is None else (part.grads,)))
        if (grads.seed, grads.padding) != key:
            raise InputError("The depth gradients came back for other settings; try again.")
        with self._lock:
            if not grads.done:
                self._grads_part[key] = grads
                self._grads_part.move_to_end(key)
                while len(self._grads_part) > self.cache_size:
                    self._grads_part.popitem(last=False)
                return None
            self._grads_part.pop(key, None)
            self._grads[key] = grads
            while len(self._grads) > self.cache_size:
                self._grads.popitem(last=False)
        if part is None and getattr(self.worker, "started", 0) == starts:  # all of it, timed
            self.grads_s = _blend(self.grads_s, time.monotonic() - start)
        return grads

    def _call(self, fn: Callable, *args: object, on_progress: Callable | None = None) -> object:
        """fn(*args) as one job in the worker; a failure as an InputError that says what is
        kept."""
        try:
            return self.worker.call(fn, *args, timeout_s=PIECE_CAP_S, on_progress=on_progress)
        except worker.Unavailable as err:
            raise InputError(f"The training run could not start: {err}.") from err
        except worker.WorkerError as err:
            raise InputError(
                f"The training run did not finish: {err}. The pieces already trained are "
                "kept: press Train to go on from there."
            ) from err


def _blend(estimate: float, measured: float) -> float:
    """A running estimate with the newest measure folded in."""
    return (1 - ESTIMATE_WEIGHT) * estimate + ESTIMATE_WEIGHT * measured


worker.HEAVY.needs(__name__)  # the pieces' module, imported before the first piece's limit
# torch.optim's first optimizer imports torch._dynamo: 1.5 s of a run's first piece here, before
# its first step, so a benchmark pressed then waited that long (no step to yield at). The
# worker imports it as it starts instead (70 MB, as after any training there).
worker.HEAVY.needs("torch._dynamo")
LAB = Lab()
