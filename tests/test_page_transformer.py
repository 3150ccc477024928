"""AppTest of pages/transformer.py: defaults, the toggle, the depth slider, the layer count."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import page_test
from streamlit.testing.v1 import AppTest

from lnlab.transformer import depth_experiment

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
