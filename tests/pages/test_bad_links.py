"""Bad links on the Transformer, Conventions and GPU pages: each opens the page's default
example with a notice, never an exception.

The default example is checked with numbers derived here (by hand or with numpy), so a link
that half-applied would fail.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from helpers import html_table, html_tables, page_test
from streamlit.testing.v1 import AppTest

HELLO = np.array([0.1, 0.3, -0.2, 0.8])
HELLO_MEANS = [0.25, 0.1, 0.25, 0.2, 0.225, 0.2]  # the gpu page's six tokens, row by row


def open_link(page: str, query: dict[str, str | list[str]]) -> AppTest:
    """Page `page` ("transformer") opened from a link with these query parameters."""
    return page_test(f"pages/{page}.py", query).run()


# ---------------------------------------------------------------- the default examples


def _open_section(at: AppTest, key: str, k: int) -> None:
    """Show section `k` (0-based) of the lesson whose section chooser is `key`."""
    at.radio(key=key).set_value(k).run()
    assert not at.exception


def _transformer_default(at: AppTest) -> None:
    assert at.radio(key="tf_norm").value == "post-norm"  # section 1: Add & Norm
    _open_section(at, "tf_slide", 1)
    (depth,) = [t for t in html_tables(at) if "no norm" in t.columns]
    assert len(depth) == 25  # the input and 24 layers
    _open_section(at, "tf_slide", 2)
    assert [m.value for m in at.metric] == ["24", "25"]  # 2 x 12 and 2 x 12 + 1


def _conventions_default(at: AppTest) -> None:
    assert at.text_area(key="cv_text").value == "0.1, 0.3, -0.2, 0.8"
    assert at.session_state["ck_case"] == "action-2468"
    table = next(t for t in html_tables(at) if "y1" in t.columns)
    pytorch = table[table.convention == "PyTorch nn.LayerNorm"]
    expected = (HELLO - HELLO.mean()) / np.sqrt(HELLO.var() + 1e-5)
    np.testing.assert_allclose(pytorch[["y1", "y2", "y3", "y4"]].to_numpy()[0], expected)


def _gpu_default(at: AppTest) -> None:
    assert at.radio(key="gpu_device").value == "auto"
    assert at.radio(key="gpu_preset").value == "hello"
    stats = html_table(at, "μ float64")  # section 1: the device and dtype
    np.testing.assert_allclose(stats["μ float64"], HELLO_MEANS, rtol=1e-15)
    _open_section(at, "gpu_slide", 3)  # the benchmark's sizes
    assert at.number_input(key="gpu_seq").value == 512


DEFAULT_CHECKS: dict[str, Callable[[AppTest], None]] = {
    "transformer": _transformer_default,
    "conventions": _conventions_default,
    "gpu": _gpu_default,
}

# ---------------------------------------------------------------- the malformed links

ANY_PAGE = [  # wrong for every page
    {"v": "9"},
    {"zzz": "1"},
    {f"p{i}": "1" for i in range(40)},  # too many parameters
    {"v": ["1", "1"]},  # repeated
]
PAGE_LINKS = {
    "transformer": [
        {"depth": "0"},  # below 1
        {"depth": "49"},  # above 48
        {"depth": "abc"},
        {"layers": "nan"},
        {"layers": "1e309"},
        {"layers": "2.5"},
        {"norm": "sideways"},
        {"s": "4"},  # there are 3 slides
        {"norm": ["post-norm", "pre-norm"]},
        {"layers": "9" * 50_000},  # oversized
    ],
    "conventions": [
        {"x": "1,x"},
        {"x": "nan,1"},
        {"x": "1e309"},
        {"x": "1,2;3"},  # wrong shape: rows of different lengths
        {"axes": ";".join(["1,2"] * 65)},  # 65 tokens, over 64
        {"x": "1" * 50_000},  # oversized
        {"tok": "0"},
        {"case": "seed999"},
        {"s": "9"},  # there are 8 slides
        {"cx": "1, " * 4_000},  # over the box's 10,000 characters
        {"cmean": "0.5\x00"},  # control character
        {"cout": "1\n" * 201},  # over 200 lines
        {"x": "2,4,6,8", "depth": "3"},  # another page's parameter
    ],
    "gpu": [
        {"dev": "tpu"},
        {"dtype": "float8"},
        {"preset": "nope"},
        {"x": "1e309,1"},
        {"x": "1,2;3"},
        {"tok": "x"},
        {"batch": "0"},
        {"seq": "8193"},
        {"feat": "1"},
        {"feat": "nan"},
        {"x": "1," * 30_000},  # oversized
    ],
}
CASES = [
    pytest.param(page, query, id=f"{page}-{i}")
    for page, queries in PAGE_LINKS.items()
    for i, query in enumerate(ANY_PAGE + queries)
]


@pytest.mark.parametrize(("page", "query"), CASES)
def test_a_bad_link_opens_the_default_example_with_a_notice(page, query):
    at = open_link(page, query)
    assert not at.exception, query
    notices = [w.value for w in at.warning if "default example" in w.value]
    assert len(notices) == 1, query
    assert at.query_params["v"] == "1"  # the URL now holds the default example's link...
    assert all(
        at.query_params.get(name) != value for name, value in query.items()
    )  # not the bad one
    DEFAULT_CHECKS[page](at)


def test_a_good_link_gives_no_notice():
    for page in PAGE_LINKS:
        at = open_link(page, {"v": "1"})
        assert not at.exception
        assert not [w for w in at.warning if "default example" in w.value]
        DEFAULT_CHECKS[page](at)
