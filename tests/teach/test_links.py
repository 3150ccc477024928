"""Shareable links: state -> link -> state gives the same numbers; bad links give one message."""

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lnlab.core.errors import InputError
from lnlab.core.parse import short_number
from lnlab.teach.links import (
    LINK_VERSION,
    Field,
    Param,
    decode_link,
    decode_matrix,
    encode_link,
    encode_matrix,
    link_with,
)

SPEC = (
    Param("x", "matrix"),
    Param("eps", "float", lo=0.0, hi=1.0),
    Param("tok", "int", lo=1, hi=64),
    Param("mode", "choice", choices=("post", "pre")),
    Param("all", "bool"),
    Param("gamma", "vector"),
    Param("s", "text", max_chars=50, max_lines=3),
)


@pytest.mark.parametrize(
    ("value", "text"), [(2.0, "2"), (0.1, "0.1"), (-1e-05, "-1e-05"), (1e20, "1e+20")]
)
def test_short_number_is_short_and_exact(value, text):
    assert short_number(value) == text
    assert float(text) == value


def test_matrix_text_is_readable():
    assert encode_matrix(np.array([[2.0, 4, 6, 8], [0.5, -1, 0, 3]])) == "2,4,6,8;0.5,-1,0,3"


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 8)), elements=finite))
def test_matrix_round_trip_is_exact(x):
    back = decode_matrix(encode_matrix(x))
    assert back.shape == x.shape
    assert np.array_equal(back, x)


def test_compact_link_commas_separate_numbers():
    """A link writes "," between numbers, so "1,5" there is two numbers, never 1.5; a float
    parameter holds one number, so a decimal comma in it is asked about."""
    decoded = decode_link({"v": "1", "x": "1,5;2,5", "gamma": "1,5"}, SPEC)
    np.testing.assert_array_equal(decoded["x"], [[1.0, 5.0], [2.0, 5.0]])
    np.testing.assert_array_equal(decoded["gamma"], [1.0, 5.0])
    with pytest.raises(InputError, match=r"0\.5"):
        decode_link({"v": "1", "eps": "0,5"}, SPEC)


def test_state_round_trip():
    state = {
        "x": np.array([[0.1, 0.3, -0.2, 0.8], [0.0, 0.1, 0.4, -0.1]]),
        "eps": 1e-5,
        "tok": 2,
        "mode": "pre",
        "all": True,
        "gamma": np.array([1.5, 1.0, 0.5, 2.0]),
        "s": "Hi Nitish\nHow are you today",
    }
    params = encode_link(state, SPEC)
    assert params["v"] == LINK_VERSION
    back = decode_link(params, SPEC)
    assert back.keys() == state.keys()
    assert np.array_equal(back["x"], state["x"])
    assert np.array_equal(back["gamma"], state["gamma"])
    assert (back["eps"], back["tok"], back["mode"], back["all"], back["s"]) == (
        1e-5,
        2,
        "pre",
        True,
        "Hi Nitish\nHow are you today",
    )


def test_missing_parameters_are_left_out():
    assert decode_link({"v": "1", "eps": "0.001"}, SPEC) == {"eps": 0.001}
    assert "tok" not in encode_link({"tok": None}, SPEC)


BAD_LINKS = [
    ({"v": "2", "eps": "0.1"}, 'link version "2" is unknown'),
    ({"v": "1", "x": "1,2;3"}, "x: row 2 has 1 number"),
    ({"x": "1,2,x"}, '"x" is not a number'),
    ({"x": "1e309"}, "not finite"),
    ({"x": "nan,1"}, "not finite"),
    ({"x": ";".join(["1"] * 65)}, "64"),
    ({"x": ",".join(["1"] * 1000)}, "64"),
    ({"x": "1" * 50_000}, "over the 40,000 limit"),
    ({"eps": "-1"}, "outside"),
    ({"eps": "inf"}, "not finite"),
    ({"eps": "1e-400"}, 'eps, position 1: "1e-400" is too small to represent'),
    ({"x": "1,2;3,-1e-999"}, 'x: row 2, column 2: "-1e-999" is too small'),
    ({"tok": "0"}, "outside"),
    ({"tok": "1.5"}, "not a whole number"),
    ({"tok": "٣"}, "not a whole number"),
    ({"tok": "9" * 30}, "not a whole number"),
    ({"mode": "sideways"}, "not one of post, pre"),
    ({"all": "yes"}, "not 0 or 1"),
    ({"s": "x" * 51}, "over the 50 limit"),
    ({"s": "a\nb\nc\nd"}, "more than 3 lines"),
    ({"s": "a\x00b"}, "control characters"),
    ({"zzz": "1"}, 'unknown parameter "zzz"'),
    ({"eps": ["0.1", "0.2"]}, "given more than once"),
    ({f"p{i}": "1" for i in range(40)}, "at most 32"),
]


@pytest.mark.parametrize(("params", "fragment"), BAD_LINKS)
def test_bad_links_raise_one_clear_error(params, fragment):
    with pytest.raises(InputError) as err:
        decode_link(params, SPEC)
    assert fragment in str(err.value)


def test_every_problem_is_listed():
    with pytest.raises(InputError) as err:
        decode_link({"eps": "-1", "tok": "x"}, SPEC)
    assert "eps:" in str(err.value)
    assert "tok:" in str(err.value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["v", "x", "eps", "tok", "mode", "all", "s"]), st.text()))
def test_random_links_only_raise_input_error(params):
    with contextlib.suppress(InputError):
        decode_link(params, SPEC)


def test_a_value_too_long_for_a_link_is_left_out():
    huge = np.full((64, 64), 0.1234567890123456)  # 64 x 64 x ~19 characters > 40,000
    params = encode_link({"x": huge, "eps": 0.5}, SPEC)
    assert "x" not in params
    assert decode_link(params, SPEC) == {"eps": 0.5}


def test_link_with_encodes_one_widget_again_in_its_place():
    fields = (
        Field(Param("step", "int", lo=1, hi=9), "k", lambda i: i - 1, lambda i: i + 1),
        Field(Param("old", "int", lo=1, hi=9), "k", lambda i: i, lambda _: None),  # never written
        Field(Param("n", "int", lo=1, hi=9), "n"),
    )
    params = {"v": "1", "step": "1", "old": "4", "n": "2"}
    assert link_with(params, fields, "k", 4) == {"v": "1", "step": "5", "n": "2"}
    assert list(link_with({"v": "1", "n": "2"}, fields, "k", 0)) == ["v", "n", "step"]
    assert link_with(params, fields, "n", 20) == {"v": "1", "step": "1", "old": "4", "n": "20"}
