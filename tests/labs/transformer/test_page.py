"""AppTest of pages/transformer.py: defaults, the toggle, the depth slider, the layer count,
links, the lesson's navigation, presenter mode and the depth table's downloads (bad links:
tests/pages/test_bad_links.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from helpers import (
    downloaded,
    formulas,
    html_table,
    html_tables,
    page_test,
    read_csv_exact,
    record_downloads,
)
from streamlit.testing.v1 import AppTest

from lnlab.labs.transformer.model import VARIANTS, depth_experiment

PAGE = "pages/transformer.py"


@pytest.fixture
def at() -> AppTest:
    app = page_test(PAGE).run()
    assert not app.exception
    return app


def _diagram_boxes(app: AppTest) -> list[str]:
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    return [a["text"] for a in spec["layout"]["annotations"] if a.get("name") == "box"]


def _depth_table(app: AppTest) -> pd.DataFrame:
    return html_table(app, "no norm").set_index("layer")


def _stage_tables(app: AppTest) -> list[pd.DataFrame]:
    return [t.set_index("token") for t in html_tables(app) if {"token", "f1"} <= set(t.columns)]


def _metrics(app: AppTest) -> list[str]:
    return [m.value for m in app.metric]


def _show(app: AppTest, section: int) -> AppTest:
    """The lesson at section `section` (0-based), chosen in the section chooser."""
    app.radio(key="tf_slide").set_value(section).run()
    assert not app.exception
    return app


def _count(app: AppTest) -> list[str]:
    return _metrics(_show(app, 2))


def test_defaults_post_norm_depth_24_and_12_layers(at):
    assert at.header[0].value == "1. Add & Norm on a small block"
    assert _diagram_boxes(at)[:3] == ["Input", "Multi-Head Attention", "Add & Norm"]
    stages = _stage_tables(at)
    assert len(stages) == 4
    assert stages[0].loc["Hello", "f4"] == 0.8  # the seed preset's first token
    np.testing.assert_allclose(stages[-1]["mean"], 0.0, atol=1e-12)
    summary = html_table(at, "mean leaving")
    np.testing.assert_allclose(summary["std leaving"], stages[-1]["std"])
    _show(at, 1)
    table = _depth_table(at)
    assert len(table) == 25  # the input and 24 layers
    expected = depth_experiment(24)
    np.testing.assert_allclose(table["post-norm"], expected.rms["post-norm"])
    np.testing.assert_allclose(table["no norm"], expected.rms["no norm"])
    last = html_table(at, "RMS after layer 24").set_index("stack")["RMS after layer 24"]
    assert last.to_dict() == {
        "no norm": expected.rms["no norm"][24],
        "post-norm": expected.rms["post-norm"][24],
        "pre-norm": expected.rms["pre-norm"][24],
        "pre-norm, final LN": expected.pre_norm_final_rms,
    }
    assert any("explodes" in m.value for m in at.markdown)
    assert _count(at) == ["24", "25"]
    assert not at.error


def test_toggle_switches_the_diagram_and_the_worked_example(at):
    post_last = _stage_tables(at)[-1]
    at.radio(key="tf_norm").set_value("pre-norm").run()
    assert not at.exception
    boxes = _diagram_boxes(at)
    assert boxes[1] == "LayerNorm" and boxes[-2] == "Final LayerNorm"
    assert len(boxes) == 9
    stages = _stage_tables(at)
    np.testing.assert_allclose(stages[1]["mean"], 0.0, atol=1e-12)  # LN(x) comes second
    assert np.all(np.abs(stages[-1]["mean"]) > 0.1)  # the stream leaving is not normalized
    assert not np.allclose(stages[-1]["f1"], post_last["f1"])
    assert any(r"f_\ell\big(\mathrm{LN}(x_\ell)\big)" in f for f in formulas(at))


def test_depth_slider_changes_the_table_and_chart(at):
    _show(at, 1)
    at.slider(key="tf_depth").set_value(5).run()
    assert not at.exception
    table = _depth_table(at)
    assert len(table) == 6
    np.testing.assert_allclose(table["pre-norm"], depth_experiment(5).rms["pre-norm"])
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(chart["data"][0]["y"]) == 6
    at.slider(key="tf_depth").set_value(48).run()
    assert len(_depth_table(at)) == 49


def test_layer_count_follows_the_number_input(at):
    _show(at, 2)
    at.number_input(key="tf_layers").set_value(40).run()
    assert _metrics(at) == ["80", "81"]
    assert any(r"2 \times 40 = 80" in f for f in formulas(at))
    assert any(r"2 \times 40 + 1 = 81" in f for f in formulas(at))


def test_out_of_range_layers_shows_an_error_and_keeps_the_last_good_numbers():
    app = page_test(PAGE)
    app.session_state["tf_layers"] = 500  # as a hand-edited link might set it
    app.run()
    assert not app.exception
    assert "between 1 and 96" in app.error[0].value
    assert _count(app) == ["24", "25"]


def test_next_previous_and_the_chooser_move_through_the_sections(at):
    assert at.button(key="transformer_prev").disabled
    at.button(key="transformer_next").click().run()
    assert at.header[0].value == "2. Depth: how big the residual stream gets"
    at.button(key="transformer_next").click().run()
    assert at.header[0].value == "3. How many Layer Norms a prompt passes through"
    assert at.button(key="transformer_next").disabled
    at.button(key="transformer_prev").click().run()
    assert at.query_params["s"] == "2"
    _show(at, 0)
    assert at.header[0].value == "1. Add & Norm on a small block"
    at.toggle(key="transformer_all").set_value(True).run()
    assert [s.value for s in at.header][:3] == [
        "1. Add & Norm on a small block",
        "2. Depth: how big the residual stream gets",
        "3. How many Layer Norms a prompt passes through",
    ]


# ---------------------------------------------------------------- links, presenter mode, exports


def _link(query: dict[str, str]) -> AppTest:
    app = page_test(PAGE, query).run()
    assert not app.exception
    return app


def test_the_url_holds_the_example_on_screen(at):
    assert dict(at.query_params) == {}  # a page just opened leaves the URL (and Back) alone
    _show(at, 1)
    at.slider(key="tf_depth").set_value(5).run()
    assert at.query_params == {
        "v": "1",
        "norm": "post-norm",
        "depth": "5",
        "layers": "12",
        "s": "2",
        "q": "0",
    }
    _show(at, 0)
    at.radio(key="tf_norm").set_value("pre-norm").run()
    assert at.query_params["norm"] == "pre-norm" and at.query_params["s"] == "1"


def test_link_round_trip_shows_the_same_numbers():
    first = _link({"v": "1", "norm": "pre-norm", "depth": "7", "layers": "30"})
    assert first.radio(key="tf_norm").value == "pre-norm"
    assert _diagram_boxes(first)[-2] == "Final LayerNorm"
    stages = _stage_tables(first)
    assert len(_depth_table(_show(first, 1))) == 8  # the input and 7 layers
    assert _count(first) == ["60", "61"]  # 2 x 30, 2 x 30 + 1
    second = _link(dict(first.query_params))
    assert second.query_params == first.query_params
    assert _metrics(second) == ["60", "61"]  # the link names the counting slide
    pd.testing.assert_frame_equal(_depth_table(_show(second, 1)), _depth_table(_show(first, 1)))
    _show(second, 0)
    assert second.radio(key="tf_norm").value == "pre-norm"
    for old, new in zip(stages, _stage_tables(second), strict=True):
        pd.testing.assert_frame_equal(old, new)


def _titles(app: AppTest) -> list[str]:
    """The titles of the sections on screen (numbered "1. ...")."""
    return [h.value.split(". ", 1)[1] for h in app.header if h.value[0].isdigit()]


def test_presenter_mode_shows_one_section_per_slide():
    app = _link({"present": "1", "depth": "5"})
    assert _titles(app) == ["Add & Norm on a small block"]
    assert not app.get("download_button")
    assert len(html_tables(app)) == 1  # the summary; the stage tables stay off the slide
    assert app.button(key="transformer_prev").disabled
    assert app.button(key="transformer_next").proto.shortcut == "right"
    assert app.button(key="transformer_prev").proto.shortcut == "left"
    app.radio(key="tf_norm").set_value("pre-norm").run()
    app.button(key="transformer_next").click().run()
    assert _titles(app) == ["Depth: how big the residual stream gets"]
    assert app.slider(key="tf_depth").value == 5
    chart = json.loads(app.get("plotly_chart")[0].proto.spec)
    assert len(chart["data"][0]["y"]) == 6  # the chart is on the slide, the depth table not
    assert [list(t.columns) for t in html_tables(app)] == [["stack", "RMS after layer 5"]]
    assert app.query_params["s"] == "2"
    app.button(key="transformer_next").click().run()
    assert _titles(app) == ["How many Layer Norms a prompt passes through"]
    assert app.button(key="transformer_next").disabled
    app.button(key="transformer_prev").click().run()
    app.button(key="transformer_prev").click().run()
    assert _titles(app) == ["Add & Norm on a small block"]
    assert app.radio(key="tf_norm").value == "pre-norm"  # kept while off screen
    assert app.query_params["norm"] == "pre-norm" and app.query_params["depth"] == "5"
    assert not app.exception


@pytest.mark.parametrize(
    ("s", "title"),
    [
        ("1", "Add & Norm on a small block"),
        ("2", "Depth: how big the residual stream gets"),
        ("3", "How many Layer Norms a prompt passes through"),
    ],
)
def test_an_old_slide_link_opens_the_same_slide(s, title):
    assert _titles(_link({"present": "1", "s": s})) == [title]
    assert _titles(_link({"s": s})) == [title]


def test_a_presenter_link_opens_on_its_slide_and_exit_shows_the_page():
    app = _link({"present": "1", "s": "3", "layers": "6"})
    assert _titles(app) == ["How many Layer Norms a prompt passes through"]
    assert _metrics(app) == ["12", "13"]
    app.button(key="present_exit").click().run()
    assert app.title[0].value == "Layer Norm in the Transformer"
    assert _titles(app)[0] == "How many Layer Norms a prompt passes through"
    assert app.get("download_button")
    assert "present" not in app.query_params


def _csv(text: str) -> pd.DataFrame:
    return read_csv_exact(text).set_index("layer")


def test_depth_table_downloads_as_csv_and_json(monkeypatch):
    files = record_downloads(monkeypatch)
    app = _link({"depth": "6", "s": "2"})
    shown = _depth_table(app)
    table = _csv(downloaded(app, "tf_dl_csv", files))
    assert list(table.columns) == ["no norm", "post-norm", "pre-norm", "pre-norm LN(x)"]
    np.testing.assert_array_equal(table[list(VARIANTS)], shown)  # LN(x) is the download's
    assert np.all(np.isfinite(table))  # a number in every cell: no NaN row
    # every variant starts from the same input, and post-norm keeps unit scale after it
    assert np.ptp(table.iloc[0, :3]) == 0
    np.testing.assert_allclose(table["post-norm"].iloc[1:], 1.0, atol=1e-4)
    data = json.loads(downloaded(app, "tf_dl_json", files))
    assert data["settings"]["depth"] == 6 and data["settings"]["eps"] == 1e-5
    for variant in VARIANTS:
        assert data["rms"][variant] == table[variant].tolist()
    assert data["pre_norm_sublayer_input_rms"] == table.iloc[:-1, 3].tolist()
    assert data["pre_norm_final_rms"] == table.iloc[-1, 3]
