"""Fair turns: while the process is busy, the visitors who have used the least of it lately run
first, and no session runs faster than lnlab.serving.pace allows.

Streamlit runs each session's script in its own thread, all of them under one GIL, in no order
but the threads' own: one visitor pressing a key fast, or a class of 300 phones redrawing,
slowed everyone else's clicks (bench/results/sessions.md). Streamlit has no hook around a
script run (a run's start and end are signalled only after the fact), so `install()` wraps
`script_runner.exec_func_with_error_handling`, the one function every run, whole page or
fragment, goes through: the run waits for its pace and its turn (lnlab.serving.fair_share),
and gives the turn back when it ends. A run that only redraws what a class shows (its timer or
its pulse asked, lnlab.ui.pulse) waits behind visitors' clicks. No upstream issue: Streamlit
assumes a process serves few sessions at once. AppTest runs take no turns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.scriptrunner import get_script_run_ctx, script_runner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

from lnlab.serving.fair_share import REDRAW_LATER_S, FairShare
from lnlab.serving.pace import Pace
from lnlab.ui import state
from lnlab.ui.claims import client_address

PULSE_KEY = "lnlab_pulse_"  # how lnlab.ui.pulse's components' keys begin: their triggers redraw
_TRIGGERS = ("trigger_value", "string_trigger_value", "json_trigger_value")
SHARE = FairShare()  # the process's turns to run, once install() has made runs take them
_GOES_ON = threading.local()  # kept: (arrived, runs) of a run that ended for a rerun
KEEP_PLACE_RERUNS = 3  # reruns in a row that keep the first run's place in line


@dataclass
class Turns:
    """A session's runs and their turns (lnlab.ui.state)."""

    pace: Pace = field(default_factory=Pace)  # how fast its runs may come
    owner: tuple[str, str] | None = None  # (session id, address): whose runs, for SHARE
    redraws: set[str] = field(default_factory=set)  # its fragments that redraw a class's view


def install() -> None:
    """Pace every script run and make it wait for its turn, given back when it ends: whole-page
    runs and fragments alike, whatever asked for them (a page, a timer, a message a script
    wrote). Idempotent."""
    original = script_runner.exec_func_with_error_handling
    if getattr(original, "takes_turns", False):
        return

    def run(func, ctx):  # type: ignore[no-untyped-def]
        try:
            wait_for_pace()
            kept = getattr(_GOES_ON, "kept", None)
            _GOES_ON.kept = None
            arrived = kept[0] if kept else time.monotonic()
            later = REDRAW_LATER_S if _redraws_only(ctx, _asked(func)) else 0.0
            _take_turn(later, arrived)
            result = original(func, ctx)
            chain = kept[1] + 1 if kept else 1
            if _ended_for_rerun(result) and chain <= KEEP_PLACE_RERUNS:
                _GOES_ON.kept = (arrived, chain)  # the rerun goes on in this place in line
            return result
        finally:
            SHARE.give_back()

    run.takes_turns = True  # type: ignore[attr-defined]
    script_runner.exec_func_with_error_handling = run


def installed() -> bool:
    """Whether runs take turns in this process (the app's server; not AppTest)."""
    return getattr(script_runner.exec_func_with_error_handling, "takes_turns", False)


def _asked(func: object) -> RerunData | None:
    """What asked for the run `func` executes: Streamlit's code_to_exec keeps its RerunData as
    a default argument (None if a later Streamlit does not)."""
    defaults = getattr(func, "__defaults__", None) or ()
    return next((d for d in defaults if isinstance(d, RerunData)), None)


def _redraws_only(ctx: object, asked: RerunData | None) -> bool:
    """Whether a run only redraws what a class shows: it runs fragments that all do so
    (redraws_a_class), and their timer or a class's pulse asked for it, not a click in them."""
    fragments = set(getattr(ctx, "fragment_ids_this_run", None) or ())
    if not fragments or not fragments <= state.of(Turns).redraws or asked is None:
        return False
    if asked.is_auto_rerun:
        return True
    fired = [
        w.id for w in (asked.widget_states.widgets if asked.widget_states else ()) if _fired(w)
    ]
    return bool(fired) and all(PULSE_KEY in widget_id for widget_id in fired)


def _fired(widget: WidgetState) -> bool:
    """A trigger in a message: a button pressed, a component's event."""
    kind = widget.WhichOneof("value")
    return kind in _TRIGGERS and bool(getattr(widget, kind))


def _ended_for_rerun(result: object) -> bool:
    """exec_func_with_error_handling's (result, ok, rerun data, stopped, error): a rerun."""
    return isinstance(result, tuple) and len(result) > 2 and result[2] is not None


def redraws_a_class(fragment_id: str | None) -> None:
    """Fragment `fragment_id` redraws what a class shows (lnlab.ui.pulse.following): a run of
    it alone, which a pulse or a timer asks for, waits behind the visitors' own clicks."""
    if fragment_id is not None:
        state.of(Turns).redraws.add(fragment_id)


def wait_for_pace() -> None:
    """Wait (holding no lock and no CPU) if this session asks for runs faster than its pace."""
    if wait := state.of(Turns).pace.take(time.monotonic()):
        time.sleep(wait)


@contextmanager
def turn_aside() -> Iterator[None]:
    """Give this run's turn back while it waits on other work (the heavy-work line, the
    worker process), and wait for a turn again after it: a wait holds nobody up. After an
    error too, which the page may show and go on from; not after Streamlit's rerun or stop
    (BaseExceptions), which end the run."""
    if not (installed() and SHARE.holding()):
        yield
        return
    SHARE.give_back()
    try:
        yield
    except Exception:
        _take_turn()
        raise
    _take_turn()


def _take_turn(later_s: float = 0.0, arrived: float | None = None) -> None:
    """Wait for this run's turn: while the process is busy, the visitors who have used the
    least of it lately go first (lnlab.serving.fair_share)."""
    turns = state.of(Turns)
    owner = turns.owner
    if owner is None:
        owner = turns.owner = (get_script_run_ctx().session_id, client_address())
    SHARE.take(*owner, later_s=later_s, arrived=arrived)
