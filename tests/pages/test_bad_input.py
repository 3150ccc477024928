"""Bad input, tried for real: every row of bad_inputs.CASES against its page in AppTest.

For each input: no exception, a message that says what is wrong (or, for a valid input, no
error), the page still shows its key number (the default example's, or the last good one),
and user text with HTML in it is shown as text: verbatim in a table, escaped everywhere
markdown or HTML is rendered, never raw in a chart. After a text or grid case the good input
is put back and the page must recover; sessions are shared per page to keep the run short.

The key numbers are worked out by hand from the presets:
step-through, token [2, 4, 6, 8]: mean 20 / 4 = 5;
padding, feature f1 of Hi 5, Nitish 3, PAD 0, PAD 0, How 4, are 1, you 7, today 2:
naive Batch Norm mean 22 / 8 (the mean of the first slide's f1 column);
conventions and GPU, the "Hello" token [0.1, 0.3, -0.2, 0.8]: mean 1.0 / 4 = 0.25;
transformer, 12 layers post-norm: 2 x 12 = 24 Layer Norms.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

import pytest
from bad_inputs import CASES, Bad
from helpers import html_frames, html_table, html_tables, metric_value, page_test
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from streamlit.testing.v1 import AppTest

DEFAULT_NUMBER = {
    "step_through": (2 + 4 + 6 + 8) / 4,
    "padding": (5 + 3 + 0 + 0 + 4 + 1 + 7 + 2) / 8,
    "conventions": (0.1 + 0.3 - 0.2 + 0.8) / 4,
    "gpu": (0.1 + 0.3 - 0.2 + 0.8) / 4,
    "transformer": 2 * 12,
}
# The link each page's shared session opens: the padding page shows every section, so its
# sections' widgets (who else's sentence box) are on screen.
# every section, so every box is on the page
OPENED_AT: dict[str, dict[str, str]] = {
    "step_through": {"all": "1"},
    "padding": {"all": "1"},
    "conventions": {"all": "1"},
}
NO_EDITS = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}
_ESCAPE = re.compile(r"\\(.)")


# ---------------------------------------------------------------- reading the page


def _table(at: AppTest, column: str):
    """The first table with a column named `column`."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _metric(at: AppTest, label: str) -> float:
    return float(next(m.value for m in at.metric if m.label.startswith(label)))


def _count_metric(at: AppTest, label: str) -> float:
    """A metric of the transformer's last section (the count), opened for it; exact from the
    metric's "Exact value" help when the shown value is rounded."""
    if not any(m.label.startswith(label) for m in at.metric):
        at.radio(key="tf_slide").set_value(2).run()
    return metric_value(at, label)


def _pytorch_mean(at: AppTest) -> float:
    table = next(
        t for t in html_tables(at) if list(t.columns[:3]) == ["convention", "token", "mean"]
    )
    return float(table[table["convention"].str.startswith("PyTorch")]["mean"].iloc[0])


KEY_NUMBER: dict[str, Callable[[AppTest], float]] = {
    "step_through": lambda at: _metric(at, "μ"),
    "padding": lambda at: float(html_frames(at, "token", "f1")[0]["f1"].mean()),  # slide 1
    "conventions": _pytorch_mean,
    "gpu": lambda at: float(html_table(at, "μ float64")["μ float64"].iloc[0]),  # section 1
    "transformer": lambda at: _count_metric(at, "Post-norm"),
}


def _messages(at: AppTest) -> list[str]:
    """Every error and warning, as the reader sees it (markdown escapes removed)."""
    return [_ESCAPE.sub(r"\1", m.value) for m in [*at.error, *at.warning]]


def _nodes(node) -> Iterator:
    for child in getattr(node, "children", {}).values():
        yield child
        yield from _nodes(child)


def _traceback(at: AppTest) -> str:
    return "\n".join(f"{e.value}\n{''.join(e.stack_trace)}" for e in at.exception)


def _assert_shown_as_text(at: AppTest, text: str, accepted: bool) -> None:
    """`text` never reaches markdown, HTML or a chart raw; accepted, it is in a table as typed."""
    if "<" in text:
        for node in _nodes(at._tree):
            body = getattr(getattr(node, "proto", None), "body", None)
            if isinstance(body, str) and node.type != "text":  # st.text shows text as text
                assert text not in body, f"{node.type} renders {text!r} unescaped"
        for chart in at.get("plotly_chart"):
            spec = json.dumps(json.loads(chart.proto.spec), ensure_ascii=False)
            assert text not in spec, f"a chart renders {text!r} unescaped"
    if accepted:
        tables = [d.value.astype(str) for d in at.dataframe]  # st.data_editor's grids too
        tables += [t.astype(str) for t in html_tables(at)]  # ui.table, labels unescaped
        assert any(
            table.apply(lambda column: column.str.contains(text, regex=False)).any().any()
            for table in tables
        ), f"no table shows {text!r} as typed"


# ---------------------------------------------------------------- sending input


def _text_widget(at: AppTest, key: str):
    try:
        return at.text_area(key=key)
    except KeyError:
        return at.text_input(key=key)


def _send_grid(at: AppTest, key: str, edits: dict) -> AppTest:
    """Send a grid edit as the browser does: the editor's JSON state in a widget message."""
    states = WidgetStates()
    states.CopyFrom(at._tree.get_widget_states())
    grid_id = at.data_editor(key=key).proto.id
    grid = next((w for w in states.widgets if w.id == grid_id), None) or states.widgets.add()
    grid.id = grid_id
    grid.string_value = json.dumps(NO_EDITS | edits)
    return at._run(states)


GRID_POPOVERS = ("st_grid_open", "pad_words_open")


class Sessions:
    """One running AppTest per page for text and grid input; fresh ones for state and links."""

    def __init__(self) -> None:
        self.running: dict[str, AppTest] = {}
        self.defaults: dict[tuple[str, str], str] = {}

    def shared(self, page: str) -> AppTest:
        if page not in self.running:
            at = page_test(f"pages/{page}.py", OPENED_AT.get(page))
            for key in GRID_POPOVERS:  # the grids are drawn only while their popovers are open
                at.session_state[key] = True
            at.run()
            assert not at.exception, _traceback(at)
            self.running[page] = at
        return self.running[page]

    def send(self, case: Bad) -> AppTest:
        """The page after `case`'s input has arrived."""
        if case.path == "state":
            at = page_test(f"pages/{case.page}.py")
            at.session_state[case.key] = case.value
            return at.run()
        if case.path == "url":
            query = OPENED_AT.get(case.page, {}) | case.value  # every section, as typed input
            return page_test(f"pages/{case.page}.py", query).run()
        at = self.shared(case.page)
        if case.path == "grid":
            return _send_grid(at, case.key, case.value)
        box = _text_widget(at, case.key)
        self.defaults.setdefault((case.page, case.key), box.value)
        return box.set_value(case.value).run()

    def restore(self, case: Bad, at: AppTest) -> AppTest:
        """Put the good input of a text or grid case back."""
        if case.path == "grid":
            return _send_grid(at, case.key, {})
        return _text_widget(at, case.key).set_value(self.defaults[case.page, case.key]).run()


@pytest.fixture(scope="module")
def sessions() -> Sessions:
    return Sessions()


def _params() -> list:
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.xfail(strict=True, reason=case.known)] if case.known else [],
        )
        for case in CASES
    ]


def test_the_table_is_big_enough_and_covers_every_page_and_path():
    assert len(CASES) >= 40
    assert len({case.name for case in CASES}) == len(CASES)
    assert {case.page for case in CASES} == set(DEFAULT_NUMBER)
    assert {case.path for case in CASES} == {"text", "grid", "state", "url"}


@pytest.mark.parametrize("case", _params())
def test_bad_input(case: Bad, sessions: Sessions):
    try:
        at = sessions.send(case)
        assert not at.exception, _traceback(at)
        messages = _messages(at)
        if case.says is None:
            assert not at.error, messages
        else:
            assert any(case.says.lower() in m.lower() for m in messages), messages
        if case.literal:
            _assert_shown_as_text(at, case.literal, accepted=case.says is None)
        shown = KEY_NUMBER[case.page](at)
        if case.keeps_number:
            expected = DEFAULT_NUMBER[case.page] if case.number is None else case.number
            assert shown == pytest.approx(expected, rel=1e-12)

        if case.path in ("text", "grid"):  # the good input back: the page recovers
            at = sessions.restore(case, at)
            assert not at.exception and not at.error, _traceback(at) or _messages(at)
            assert KEY_NUMBER[case.page](at) == pytest.approx(DEFAULT_NUMBER[case.page], rel=1e-12)
    except BaseException:
        sessions.running.pop(case.page, None)  # the next case starts a fresh session
        raise
