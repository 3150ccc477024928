"""lnlab.labs.padding.state: the padding page's state rules, on a plain dict."""

import pytest

from lnlab.core.errors import InputError
from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import state
from lnlab.labs.padding.lesson import DEFAULT_COUNT


def fresh() -> dict:
    s: dict = {}
    state.set_defaults(s)
    sentences = pad.parse_sentences(s["pad_sentences"])
    s["pad_page_inputs"] = state.PageInputs(sentences, (), 1e-5, 0.0)
    return s


def test_a_preset_fills_the_sentences_and_forgets_the_edits():
    s = fresh()
    s["pad_overrides"] = {"Hi": (1.0, 2.0, 3.0)}
    s["pad_preset"] = "hi-nitish-contextual"
    state.load_preset(s)
    assert s["pad_sentences"] == "Hi Nitish\nHow are you today"
    assert s["pad_overrides"] == {} and s["pad_table_epoch"] == 1


def test_choices_out_of_range_fall_back_and_bad_inputs_keep_the_last_good():
    s = fresh()
    s.update(pad_focus=7, pad_other=9, pad_pick=pad.PICK_TOKEN, pad_token=99, pad_steps=0)
    s["pad_batch"] = 0  # no batch of 0 sentences
    inputs, view = state.lab_and_view(s)
    # focus on sentence 1, the other one is sentence 2
    assert (inputs.focus, inputs.other) == (0, 1)
    assert view.index == 0 and view.count == DEFAULT_COUNT
    assert view.steps == pad.DEFAULT_STEPS
    s["pad_good_steps"] = 30
    assert state.lab_and_view(s)[1].steps == 30


def test_steps_and_count_say_what_is_wrong():
    s = fresh()
    s["pad_steps"] = pad.MAX_STEPS + 1
    with pytest.raises(InputError, match="whole number from 1 to"):
        state.steps(s)
    s.update(pad_batch=32, pad_longest=100, pad_average=30.0)
    assert state.count(s).share == pytest.approx(0.7)  # 1 - 30 / 100
