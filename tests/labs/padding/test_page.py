"""The padding page in AppTest: default preset, interactions, bad input.

Expected numbers are worked out by hand from the "hi-nitish" preset: the stacked rows are
Hi (5, 1, 8), Nitish (3, 7, 2), PAD, PAD, How (4, 2, 6), are (1, 8, 3), you (7, 5, 9),
today (2, 4, 1).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import ROOT, app_test, bn_means, html_frames
from helpers import formulas as drawn_formulas
from streamlit.testing.v1 import AppTest

from lnlab.teach.figures import HIGHLIGHT

PAGE = str(ROOT / "pages" / "padding.py")


@pytest.fixture
def at() -> AppTest:
    """The page with every section shown ("Show every section", as `all=1` in a link)."""
    app = app_test(PAGE)
    app.session_state["padding_all"] = True
    app.session_state["pad_words_open"] = True  # the grid is drawn only while it is open
    app.run()
    assert not app.exception
    return app


def formulas(app: AppTest) -> str:
    """Every formula on the page: ui.formulas' (MathML) and those in Markdown's text."""
    inline = (m.value for m in app.markdown if "$" in m.value)
    return "\n".join([*drawn_formulas(app), *inline])


def pad_rows(frame):
    return frame[frame["token"].str.endswith("[PAD]")]


def metric(app: AppTest, label: str) -> str:
    return next(m.value for m in app.metric if m.label == label)


def batch_figure(app: AppTest) -> dict:
    spec = json.loads(app.get("plotly_chart")[1].proto.spec)  # [0] is the plain batch
    assert spec["layout"]["title"]["text"].startswith("The stacked batch")
    return spec


def outlined_cells(app: AppTest) -> list[tuple[float, float]]:
    """(row, column) of every outlined cell of the batch heatmap."""
    shapes = batch_figure(app)["layout"]["shapes"]
    return sorted(
        (s["y0"] + 0.5, s["x0"] + 0.5)
        for s in shapes
        if s.get("line", {}).get("color") == HIGHLIGHT
    )


def errors(app: AppTest) -> list[str]:
    return [e.value for e in app.error]


def test_default_preset_shows_the_padded_statistics(at):
    naive, masked = bn_means(at)
    assert naive == pytest.approx([22 / 8, 27 / 8, 29 / 8])
    assert masked == pytest.approx([22 / 6, 27 / 6, 29 / 6])
    ln = html_frames(at, "token", "mean μ")[0]
    assert ln["mean μ"].tolist() == pytest.approx([14 / 3, 4, 0, 0, 4, 4, 7, 7 / 3])
    naive_out = html_frames(at, "token", "f1")[1]  # [0] is the input batch
    pad_row = naive_out[naive_out["token"] == "1.3 [PAD]"][["f1", "f2", "f3"]].to_numpy()[0]
    rows = np.array(
        [[5, 1, 8], [3, 7, 2], [0, 0, 0], [0, 0, 0], [4, 2, 6], [1, 8, 3], [7, 5, 9], [2, 4, 1]]
    )
    expected = -rows.mean(axis=0) / np.sqrt(rows.var(axis=0) + 1e-5)
    assert pad_row == pytest.approx(expected)
    ln_out = html_frames(at, "token", "f1")[3]
    assert pad_rows(ln_out)[["f1", "f2", "f3"]].to_numpy().tolist() == [[0, 0, 0]] * 2
    assert metric(at, "Share of PAD zeros p") == "0.7"
    assert metric(at, "Positions in the padded tensor") == "3200"
    assert metric(at, "Layer Norm: max |change|") == "0"
    assert float(metric(at, "Batch Norm, masked: max |change|")) > 0.1
    assert r"p = \tfrac{2}{8} = 0.25" in formulas(at)
    check = html_frames(at, "feature", "μ (real)")[0]
    assert check["mean diff"].abs().max() < 1e-12
    assert check["variance diff"].abs().max() < 1e-12
    assert r"\tfrac{1}{8}\big(5 + 3 + 0 + 0 + 4 + 1 + 7 + 2\big) = 2.75" in formulas(at)
    assert outlined_cells(at) == [(float(r), 0.0) for r in range(8)]
    assert not at.error and not at.warning


def test_editing_sentences_changes_the_statistics(at):
    at.text_area(key="pad_sentences").input("Hi Nitish\nHow are you").run()
    naive, masked = bn_means(at)
    # rows Hi, Nitish, PAD, How, are, you: feature 1 = (5 + 3 + 0 + 4 + 1 + 7) / 6
    assert naive[0] == pytest.approx(20 / 6)
    assert masked[0] == pytest.approx(20 / 5)
    assert len(html_frames(at, "token", "f1")[0]) == 6


def test_picking_a_masked_column_or_a_token_row_moves_the_outline(at):
    at.radio(key="pad_pick").set_value("masked").run()
    at.radio(key="pad_feature").set_value(2).run()
    assert outlined_cells(at) == [(float(r), 2.0) for r in (0, 1, 4, 5, 6, 7)]
    assert r"\tfrac{1}{6}\big(8 + 2 + 6 + 3 + 9 + 1\big)" in formulas(at)
    at.radio(key="pad_pick").set_value("token").run()
    at.radio(key="pad_token").set_value(4).run()
    assert outlined_cells(at) == [(4.0, 0.0), (4.0, 1.0), (4.0, 2.0)]
    assert r"\tfrac{1}{3}\big(4 + 2 + 6\big) = 4" in formulas(at)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "at least one sentence"),
        (" ".join(["word"] * 17), "17 words"),
        ("Hi " + "x" * 100, "100 characters"),
    ],
)
def test_bad_sentences_show_an_error_and_keep_the_last_good_batch(at, text, message):
    at.text_area(key="pad_sentences").input(text).run()
    assert not at.exception
    assert any(message in e for e in errors(at))
    assert bn_means(at)[0][0] == pytest.approx(22 / 8)


def test_html_in_sentences_renders_as_text(at):
    at.text_area(key="pad_sentences").input("<script>alert(1)</script> hi\nok").run()
    assert not at.exception and not at.error
    labels = batch_figure(at)["data"][0]["y"]
    assert labels[0] == "1.1 &lt;script&gt;alert(1)&lt;/script&gt;"
    assert html_frames(at, "token", "f1")[0]["token"][0] == "1.1 <script>alert(1)</script>"


def test_eps_zero_explains_the_nan(at):
    at.number_input(key="pad_eps").set_value(0.0).run()
    warning = at.warning[0].value
    assert "NaN" in warning and "variance is 0" in warning and "0/0" in warning
    ln_out = html_frames(at, "token", "f1")[3]
    assert pad_rows(ln_out)[["f1", "f2", "f3"]].isna().all().all()


def test_editing_an_embedding_changes_the_batch(at):
    edit = {"edited_rows": {0: {"f1": 9.0}}, "added_rows": [], "deleted_rows": []}
    at.session_state["pad_words"] = edit
    at.run()
    # feature 1: (9 + 3 + 0 + 0 + 4 + 1 + 7 + 2) / 8
    assert bn_means(at)[0][0] == pytest.approx(26 / 8)
    table = at.data_editor(key="pad_words").value
    assert table.loc["Hi", "from"] == "edited"
    at.session_state["pad_words"] = {**edit, "edited_rows": {0: {"f1": None}}}
    at.run()
    assert any("empty" in e for e in errors(at))
    assert bn_means(at)[0][0] == pytest.approx(26 / 8)


def test_other_preset_drops_edits_and_reset_drops_them_too(at):
    edit = {"edited_rows": {0: {"f1": 9.0}}, "added_rows": [], "deleted_rows": []}
    at.session_state["pad_words"] = edit
    at.run()
    at.radio(key="pad_preset").set_value("hi-nitish-contextual").run()
    # feature 1: (6.5 + 4.2 + 5.7 + 3.4 + 8.9 + 1.2) / 8 = 29.9 / 8
    assert bn_means(at)[0][0] == pytest.approx(29.9 / 8)
    assert set(at.data_editor(key="pad_words").value["from"]) == {"preset"}
    at.session_state["pad_words"] = edit
    at.run()
    assert bn_means(at)[0][0] == pytest.approx((29.9 - 6.5 + 9) / 8)
    at.button(key="pad_reset_words").click().run()
    assert bn_means(at)[0][0] == pytest.approx(29.9 / 8)


def test_who_else_with_an_unchanged_sentence_changes_nothing(at):
    at.text_input(key="pad_other_text").input("How are you today").run()
    assert metric(at, "Batch Norm, masked: max |change|") == "0"
    at.text_input(key="pad_other_text").input("").run()
    assert any("empty" in e for e in errors(at))


def test_calculator_validates_and_keeps_the_last_good_count(at):
    at.number_input(key="pad_longest").set_value(50).run()
    at.number_input(key="pad_average").set_value(20.0).run()
    assert metric(at, "Share of PAD zeros p") == "0.6"
    at.number_input(key="pad_average").set_value(120.0).run()
    assert any("cannot exceed" in e for e in errors(at))
    assert metric(at, "Share of PAD zeros p") == "0.6"


def test_preactivation_table_both_ways(at):
    columns = html_frames(at, "sample", "z1", "z2", "z3")
    node_means = columns[0].set_index("sample").loc["mean μ"]
    assert node_means.tolist() == pytest.approx([4.0, 3.6, 4.2])  # 20/5, 18/5, 21/5
    sample_stats = next(f for f in columns if "mean μ" in f.columns)
    assert sample_stats["mean μ"].tolist() == pytest.approx([16 / 3, 3, 2, 6, 10 / 3])


def test_running_statistics_after_several_steps(at):
    # 20 steps from 0 with momentum 0.1: running mean = (1 - 0.9^20) x batch mean
    running = html_frames(at, "feature", "batch μ")[0]
    means = np.array([22 / 8, 27 / 8, 29 / 8])
    assert running["running μ"].tolist() == pytest.approx((1 - 0.9**20) * means)
    first = float(metric(at, "max |eval − train| after 1 step"))
    after = float(metric(at, "after 20 steps"))
    assert first > 4 and 0 < after < first / 10
    at.number_input(key="pad_steps").set_value(1).run()
    running = html_frames(at, "feature", "batch μ")[0]
    assert running["running μ"].tolist() == pytest.approx(0.1 * means)
    assert metric(at, "after 1 steps") == metric(at, "max |eval − train| after 1 step")


def test_no_padding_one_sentence_and_shrinking_batches(at):
    at.radio(key="pad_pick").set_value("token").run()
    at.radio(key="pad_token").set_value(7).run()
    at.radio(key="pad_focus").set_value(1).run()
    at.text_area(key="pad_sentences").input("a b\nc d").run()
    assert not at.exception
    assert any("No PAD rows" in i.value for i in at.info)
    assert outlined_cells(at) == [(0.0, 0.0), (0.0, 1.0), (0.0, 2.0)]  # row 8 is gone
    at.text_area(key="pad_sentences").input("solo").run()
    assert not at.exception
    assert any("one sentence" in i.value for i in at.info)


def test_an_edit_sent_as_the_grid_closes_is_kept():
    """The click that closes the grid's popover can also end an edit: the run sees the
    popover closed, the grid not drawn, and the edit in its state."""
    app = app_test(PAGE)
    app.session_state["padding_all"] = True
    app.session_state["pad_words_open"] = False
    app.session_state["pad_words"] = {"edited_rows": {0: {"f1": 9.0}}}
    app.run()
    assert not app.exception and not app.data_editor
    assert bn_means(app)[0][0] == pytest.approx(26 / 8)
    app.session_state["pad_words"] = {"edited_rows": {0: {"f1": "abc"}}}
    app.run()
    assert not app.exception and errors(app)


def test_crafted_messages_do_not_crash_the_page():
    """Values the browser never sends: a NaN epsilon, an edit of a column that does not exist."""
    app = app_test(PAGE)
    app.session_state["padding_all"] = True
    app.session_state["pad_eps"] = float("nan")
    app.session_state["pad_words_open"] = True
    app.session_state["pad_words"] = {"edited_rows": {"0": {"f999": 1}}}
    app.run()
    assert not app.exception
    assert any("epsilon must be a number from 0 to 1, not nan" in e for e in errors(app))
    assert any("could not be applied" in e and "f999" in e for e in errors(app))
    assert bn_means(app)[0] == pytest.approx([22 / 8, 27 / 8, 29 / 8])
    # the crafted edit is gone: a real edit works again
    app.session_state["pad_words"] = {"edited_rows": {0: {"f1": 9.0}}}
    app.run()
    assert bn_means(app)[0][0] == pytest.approx(26 / 8)
