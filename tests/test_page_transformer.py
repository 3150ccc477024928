"""AppTest of pages/transformer.py: defaults, the toggle, the depth slider, the layer count,
links, presenter mode and the depth table's downloads (bad links: test_links_pages_b.py)."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from helpers import downloaded, page_test, record_downloads
from streamlit.testing.v1 import AppTest

from lnlab.transformer import VARIANTS, depth_experiment

PAGE = "pages/transformer.py"


@pytest.fixture
def at() -> AppTest:
    app = page_test(PAGE).run()
    assert not app.exception
    return app


def _diagram_boxes(app: AppTest) -> list[str]:
    spec = json.loads(app.get("plotly_chart")[0].proto.spec)
    return [a["text"] for a in spec["layout"]["annotations"] if a.get("name") == "box"]


def _depth_table(app: AppTest):
    (table,) = [d.value for d in app.dataframe if "no norm" in d.value.columns]
    return table


def _stage_tables(app: AppTest) -> list:
    return [d.value for d in app.dataframe if "std" in d.value.columns]


def test_defaults_post_norm_depth_24_and_12_layers(at):
    assert _diagram_boxes(at)[:3] == ["Input", "Multi-Head Attention", "Add & Norm"]
    assert [m.value for m in at.metric] == ["24", "25"]
    table = _depth_table(at)
    assert len(table) == 25  # the input and 24 layers
    expected = depth_experiment(24)
    np.testing.assert_allclose(table["post-norm"], expected.rms["post-norm"])
    np.testing.assert_allclose(table["no norm"], expected.rms["no norm"])
    stages = _stage_tables(at)
    assert len(stages) == 4
    assert stages[0].loc["Hello", "f4"] == 0.8  # the seed preset's first token
    np.testing.assert_allclose(stages[-1]["mean"], 0.0, atol=1e-12)
    assert any("explodes" in c.value for c in at.caption)
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
    assert any(r"f_\ell\big(\mathrm{LN}(x_\ell)\big)" in x.value for x in at.latex)


def test_depth_slider_changes_the_table_and_chart(at):
    at.slider(key="tf_depth").set_value(5).run()
    assert not at.exception
    table = _depth_table(at)
    assert len(table) == 6
    np.testing.assert_allclose(table["pre-norm"], depth_experiment(5).rms["pre-norm"])
    chart = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert len(chart["data"][0]["y"]) == 6
    at.slider(key="tf_depth").set_value(48).run()
    assert len(_depth_table(at)) == 49


def test_layer_count_follows_the_number_input(at):
    at.number_input(key="tf_layers").set_value(40).run()
    assert [m.value for m in at.metric] == ["80", "81"]
    assert any(r"2 \times 40 = 80" in x.value and "+ 1 = 81" in x.value for x in at.latex)


def test_out_of_range_layers_shows_an_error_and_keeps_the_last_good_numbers():
    app = page_test(PAGE)
    app.session_state["tf_layers"] = 500  # as a hand-edited link might set it
    app.run()
    assert not app.exception
    assert "between 1 and 96" in app.error[0].value
    assert [m.value for m in app.metric] == ["24", "25"]


# ---------------------------------------------------------------- links, presenter mode, exports


def _link(query: dict[str, str]) -> AppTest:
    app = page_test(PAGE, query).run()
    assert not app.exception
    return app


def test_the_url_holds_the_example_on_screen(at):
    assert dict(at.query_params) == {}  # a page just opened leaves the URL (and Back) alone
    at.slider(key="tf_depth").set_value(5).run()
    assert at.query_params == {
        "v": "1",
        "norm": "post-norm",
        "depth": "5",
        "layers": "12",
        "s": "1",
    }
    at.radio(key="tf_norm").set_value("pre-norm").run()
    assert at.query_params["norm"] == "pre-norm"


def test_link_round_trip_shows_the_same_numbers():
    first = _link({"v": "1", "norm": "pre-norm", "depth": "7", "layers": "30"})
    assert first.radio(key="tf_norm").value == "pre-norm"
    assert [m.value for m in first.metric] == ["60", "61"]  # 2 x 30, 2 x 30 + 1
    assert len(_depth_table(first)) == 8  # the input and 7 layers
    assert _diagram_boxes(first)[-2] == "Final LayerNorm"
    second = _link(dict(first.query_params))
    assert second.query_params == first.query_params
    assert second.radio(key="tf_norm").value == "pre-norm"
    assert [m.value for m in second.metric] == ["60", "61"]
    pd.testing.assert_frame_equal(_depth_table(second), _depth_table(first))
    for old, new in zip(_stage_tables(first), _stage_tables(second), strict=True):
        pd.testing.assert_frame_equal(old, new)


def _headers(app: AppTest) -> list[str]:
    return [h.value for h in app.header]


def test_presenter_mode_shows_one_section_per_slide():
    app = _link({"present": "1", "depth": "5"})
    assert _headers(app) == ["Add & Norm on a small block"]
    assert not app.get("download_button")
    assert not app.expander  # the sublayer's weights stay off the slide
    assert app.button(key="tf_prev").disabled
    assert app.button(key="tf_next").proto.shortcut == "right"
    assert app.button(key="tf_prev").proto.shortcut == "left"
    app.radio(key="tf_norm").set_value("pre-norm").run()
    app.button(key="tf_next").click().run()
    assert _headers(app) == ["Depth: how big the residual stream gets"]
    assert app.slider(key="tf_depth").value == 5
    chart = json.loads(app.get("plotly_chart")[0].proto.spec)
    assert len(chart["data"][0]["y"]) == 6  # the chart is on the slide, the table is not
    assert not app.dataframe
    assert app.query_params["s"] == "2"
    app.button(key="tf_next").click().run()
    assert _headers(app) == ["How many Layer Norms a prompt passes through"]
    assert app.button(key="tf_next").disabled
    app.button(key="tf_prev").click().run()
    app.button(key="tf_prev").click().run()
    assert _headers(app) == ["Add & Norm on a small block"]
    assert app.radio(key="tf_norm").value == "pre-norm"  # kept while off screen
    assert app.query_params["norm"] == "pre-norm" and app.query_params["depth"] == "5"
    assert not app.exception


def test_a_presenter_link_opens_on_its_slide_and_exit_shows_everything():
    app = _link({"present": "1", "s": "3", "layers": "6"})
    assert _headers(app) == ["How many Layer Norms a prompt passes through"]
    assert [m.value for m in app.metric] == ["12", "13"]
    app.button(key="present_exit").click().run()
    assert len(_headers(app)) == 3
    assert app.get("download_button")
    assert "present" not in app.query_params


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text)).set_index("layer")


def test_depth_table_downloads_as_csv_and_json(monkeypatch):
    files = record_downloads(monkeypatch)
    app = _link({"depth": "6"})
    shown = _depth_table(app)
    table = _csv(downloaded(app, "tf_dl_csv", files))
    assert list(table.columns) == ["no norm", "post-norm", "pre-norm", "pre-norm: sublayer input"]
    np.testing.assert_array_equal(table[list(VARIANTS)], shown[list(VARIANTS)])
    np.testing.assert_array_equal(table.iloc[1:, 3], shown.iloc[1:, 3])
    assert np.isnan(table.iloc[0, 3])  # no sublayer before layer 1
    # every variant starts from the same input, and post-norm keeps unit scale after it
    assert np.ptp(table.iloc[0, :3]) == 0
    np.testing.assert_allclose(table["post-norm"].iloc[1:], 1.0, atol=1e-4)
    data = json.loads(downloaded(app, "tf_dl_json", files))
    assert data["settings"]["depth"] == 6 and data["settings"]["eps"] == 1e-5
    for variant in VARIANTS:
        assert data["rms"][variant] == table[variant].tolist()
    assert data["pre_norm_sublayer_input_rms"] == table.iloc[1:, 3].tolist()
