"""The padding page in class: shareable links, presenter mode, predictions and exports.

Expected numbers are worked out by hand from the "hi-nitish" preset: the stacked rows are
Hi (5, 1, 8), Nitish (3, 7, 2), PAD, PAD, How (4, 2, 6), are (1, 8, 3), you (7, 5, 9),
today (2, 4, 1); feature f1 sums to 22 over 8 rows, 6 of them real.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import bn_means, html_frames, page_test, question_key
from helpers import formulas as drawn_formulas
from streamlit.testing.v1 import AppTest

from lnlab.labs.padding import batch as pad
from lnlab.labs.padding import export as pex
from lnlab.labs.padding import lesson
from lnlab.labs.padding.questions import PADDING_CHOICES

PAGE = "pages/padding.py"
SECTION_TITLES = (
    "The batch",
    "Which cells feed a statistic",
    "Batch Norm's statistics",
    "Layer Norm's statistics",
    "Naive Batch Norm's output",
    "Masked Batch Norm's output",
    "Layer Norm's output: each row on its own",
    "What padding does to the statistics",
    "How much padding a real batch has",
    "Who else is in the batch?",
    "Down the columns: Batch Norm",
    "Across the rows: Layer Norm",
    "Masking is not the whole story: running statistics",
    "Training and inference disagree",
)
# old links' slide=1..8 (the page's eight sections before the lesson) open these sections
OLD_SLIDES = {1: 1, 2: 2, 3: 3, 4: 5, 5: 8, 6: 10, 7: 11, 8: 13}
ROWS = np.array(
    [[5, 1, 8], [3, 7, 2], [0, 0, 0], [0, 0, 0], [4, 2, 6], [1, 8, 3], [7, 5, 9], [2, 4, 1]],
    dtype=np.float64,
)
PAD_F1 = -ROWS[:, 0].mean() / np.sqrt(ROWS[:, 0].var() + 1e-5)  # a PAD row, naive BN, f1


def open_page(query: dict[str, str] | None = None, **state) -> AppTest:
    """The page from a link; every section shown unless the link says otherwise."""
    at = page_test(PAGE, {"all": "1", **(query or {})})
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def outputs(at: AppTest) -> list[pd.DataFrame]:
    """Naive BN, masked BN and LN outputs (the first token table is the input batch)."""
    return html_frames(at, "token", "f1")[1:4]


def formulas(app: AppTest) -> str:
    """Every formula on the page: ui.formulas' (MathML) and those in Markdown's text."""
    inline = (m.value for m in app.markdown if "$" in m.value)
    return "\n".join([*drawn_formulas(app), *inline])


def shown(at: AppTest) -> tuple:
    """Everything the page shows as numbers: tables, metrics, formulas."""
    tables = tuple(f.to_json() for f in html_frames(at))
    metrics = tuple((m.label, m.value) for m in at.metric)
    return tables, metrics, formulas(at)


def headers(at: AppTest) -> list[str]:
    """The section titles shown (the exports' heading left out)."""
    return [h.value for h in at.header if h.value != "Take the numbers with you"]


def link_notice(at: AppTest) -> str:
    return next(w.value for w in at.warning if "default example" in w.value)


def is_default(at: AppTest) -> bool:
    """The default example: its batch (on the first section, which a bad link opens)."""
    (batch,) = html_frames(at, "token", "f1")[:1]
    return (
        batch[["f1", "f2", "f3"]].to_numpy().tolist() == ROWS.tolist()
        and at.text_area(key="pad_sentences").value == "Hi Nitish\nHow are you today"
        and at.session_state["pad_eps"] == 1e-5
    )


# ---------------------------------------------------------------- links


def test_the_url_holds_the_state_from_the_first_edit():
    at = page_test(PAGE).run()
    assert is_default(at)
    assert dict(at.query_params) == {}  # a page just opened leaves the URL (and Back) alone
    at.number_input(key="pad_eps").set_value(0.5).run()
    link = dict(at.query_params)
    assert link["s"] == "Hi Nitish\nHow are you today"
    assert (link["v"], link["preset"], link["eps"], link["stat"]) == (
        "1",
        "hi-nitish",
        "0.5",
        "naive",
    )
    assert (link["focus"], link["other"], link["edit"]) == ("1", "2", "How are we today")
    assert (link["batch"], link["longest"], link["avg"], link["section"]) == (
        "32",
        "100",
        "30",
        "1",
    )
    assert link["steps"] == "20" and "slide" not in link  # `slide` is only read, from old links
    assert "w" not in link  # no edited embeddings


def test_a_link_opens_its_example():
    # rows a (1, 2, 3), b (4, 5, 6), c (7, 8, 9), d (0, 1, 2), PAD, PAD
    at = open_page(
        {
            "s": "a b c\nd",
            "w": "a:1,2,3 b:4,5,6 c:7,8,9 d:0,1,2",
            "eps": "0.5",
            "beta": "2",
            "stat": "token",
            "tok": "4",
        },
        pad_words_open=True,  # the grid is drawn only while its popover is open
    )
    assert not at.warning
    naive, masked = bn_means(at)
    assert naive == pytest.approx([12 / 6, 16 / 6, 20 / 6])
    assert masked == pytest.approx([12 / 4, 16 / 4, 20 / 4])
    ln_out = outputs(at)[2]
    pads = ln_out[ln_out["token"].str.endswith("[PAD]")]
    assert pads[["f1", "f2", "f3"]].to_numpy().tolist() == [[2.0] * 3] * 2
    # token 4 is d = (0, 1, 2): mean 1
    assert r"\tfrac{1}{3}\big(0 + 1 + 2\big) = 1" in formulas(at)
    assert set(at.data_editor(key="pad_words").value["from"]) == {"edited"}


def test_round_trip_state_link_state_shows_the_same_numbers():
    edit = {"edited_rows": {0: {"f1": 9.0}}, "added_rows": [], "deleted_rows": []}
    first = page_test(PAGE, {"all": "1"}).run()
    first.text_area(key="pad_sentences").input("Hi  Nitish\n\nHow are you today\nzebra").run()
    first.session_state["pad_words_open"] = True
    first.session_state["pad_words"] = edit
    first.run()
    first.number_input(key="pad_eps").set_value(0.01).run()
    first.number_input(key="pad_beta").set_value(-1.5).run()
    first.radio(key="pad_pick").set_value("masked").run()
    first.radio(key="pad_feature").set_value(2).run()
    first.radio(key="pad_focus").set_value(2).run()
    first.text_input(key="pad_other_text").input("Bye").run()
    first.number_input(key="pad_longest").set_value(50).run()
    first.number_input(key="pad_average").set_value(20.0).run()
    first.radio(key="pad_cf_feature").set_value(1).run()
    assert not first.exception and not first.error
    link = dict(first.query_params)
    assert link["s"] == "Hi Nitish\nHow are you today\nzebra"  # canonical: one space, no blanks
    assert link["w"] == "Hi:9,1,8"
    assert (link["eps"], link["beta"], link["feat"], link["focus"]) == ("0.01", "-1.5", "3", "3")
    second = open_page(link)
    assert not second.warning
    assert shown(second) == shown(first)
    # and the numbers are the right ones: f1 = 9, 3, 0, 0, 4, 1, 7, 2, zebra, PAD, PAD, PAD
    zebra = pad.word_embedding("zebra")[0]
    assert bn_means(second)[0][0] == pytest.approx((26 + zebra) / 12)
    assert dict(second.query_params) == link


def test_link_applies_once_so_edits_after_it_stay():
    at = open_page({"eps": "0.5"})
    at.number_input(key="pad_eps").set_value(0.25).run()
    assert at.session_state["pad_eps"] == 0.25
    assert at.query_params["eps"] == "0.25"


@pytest.mark.parametrize(
    "query",
    [
        {"eps": "abc"},  # not a number
        {"eps": "5"},  # out of range
        {"beta": "nan"},  # not finite
        {"beta": "1e309"},  # overflows to inf
        {"v": "9"},  # unknown version
        {"junk": "1"},  # unknown parameter
        {"s": "word " * 2000},  # oversized
        {"s": "\n".join(["a"] * 9)},  # too many sentences
        {"s": " ".join(["w"] * 17)},  # a 17-word sentence
        {"s": "zero\u200bwidth"},  # an invisible character
        {"w": "Hi:1,2"},  # wrong shape
        {"w": "Hi:1,2,nan"},
        {"w": "Hi:1,2,3 Hi:4,5,6"},
        {"stat": "median"},  # not a choice
        {"tok": "1.5"},  # not whole
        {"slide": "9"},  # the old page had eight sections
        {"section": "15"},
        {"edit": "two\nlines"},
        {"preset": "nope"},
        {"eps": "0.5", "beta": "x"},  # one bad parameter spoils the whole link
        {f"p{i}": "1" for i in range(40)},  # too many parameters
    ],
)
def test_bad_links_open_the_default_example_with_a_notice(query):
    at = open_page(query)
    assert "could not be opened" in link_notice(at) or "parameters" in link_notice(at)
    assert is_default(at)
    assert not at.error


# ---------------------------------------------------------------- presenter mode


def test_presenter_mode_shows_one_slide_and_steps_through_them():
    at = open_page({"present": "1"})
    assert headers(at) == [f"1. {SECTION_TITLES[0]}"]
    # the inputs and the exports are hidden
    assert not at.text_area and not at.get("download_button")
    assert at.button(key="padding_next").proto.shortcut == "right"
    assert at.button(key="padding_prev").proto.shortcut == "left"
    assert at.button(key="padding_prev").disabled
    at.button(key="padding_next").click().run()
    assert headers(at) == [f"2. {SECTION_TITLES[1]}"]
    assert at.query_params["section"] == "2" and at.query_params["present"] == "1"
    at.run()
    assert headers(at) == [f"2. {SECTION_TITLES[1]}"]  # a rerun stays on the slide
    for number in range(3, len(SECTION_TITLES) + 1):
        at.button(key="padding_next").click().run()
        assert headers(at) == [f"{number}. {SECTION_TITLES[number - 1]}"]
        assert not at.exception
    assert at.button(key="padding_next").disabled
    at.button(key="padding_prev").click().run()
    assert headers(at) == [f"13. {SECTION_TITLES[12]}"]


def test_the_section_chooser_and_the_link_name_the_section():
    at = page_test(PAGE).run()
    assert headers(at) == [f"1. {SECTION_TITLES[0]}"]  # one section at a time
    at.radio(key="pad_slide").set_value(9).run()
    assert headers(at) == [f"10. {SECTION_TITLES[9]}"]
    assert at.query_params["section"] == "10"
    at.button(key="padding_prev").click().run()
    assert headers(at) == [f"9. {SECTION_TITLES[8]}"]
    again = page_test(PAGE, dict(at.query_params)).run()
    assert headers(again) == [f"9. {SECTION_TITLES[8]}"]
    at.toggle(key="padding_all").set_value(True).run()
    assert len(headers(at)) == len(SECTION_TITLES)


@pytest.mark.parametrize(("old", "new"), sorted(OLD_SLIDES.items()))
def test_old_slide_links_open_the_same_content(old, new):
    at = open_page({"present": "1", "slide": str(old)})
    assert not at.warning
    assert headers(at) == [f"{new}. {SECTION_TITLES[new - 1]}"]
    assert lesson.SECTION_KEYS[new - 1] == lesson.SECTION_KEYS[lesson.OLD_SLIDES[old - 1]]


def test_a_link_opens_a_slide_of_its_own_example():
    at = open_page({"present": "1", "slide": "4", "beta": "3"})
    assert headers(at) == [f"5. {SECTION_TITLES[4]}"]
    assert rf"[{PAD_F1 + 3:.4f}" in formulas(at)  # the PAD row's f1, 4 decimals


def test_hidden_inputs_keep_their_values_through_presenter_mode():
    at = open_page()
    at.text_area(key="pad_sentences").input("Hi Nitish\nHow are you").run()
    at.toggle(key="present_toggle").set_value(True).run()
    assert any("(B, S, D) = (2, 3, 3)" in m.value for m in at.markdown)
    at.button(key="padding_next").click().run()
    at.button(key="present_exit").click().run()
    assert at.text_area(key="pad_sentences").value == "Hi Nitish\nHow are you"
    assert len(headers(at)) == len(SECTION_TITLES)  # every section, and the exports
    assert at.get("download_button")


# ---------------------------------------------------------------- predict, then reveal


def check(at: AppTest, key: str) -> None:
    at.button(key="check_" + key.removeprefix("q_")).click().run()


def test_predictions_hide_the_answers_until_checked_and_keep_the_score():
    at = open_page({"q": "1"})
    assert not html_frames(at, "feature", "μ, PAD included")  # they wait for the prediction
    assert len(html_frames(at, "token", "f1")) == 2  # the input and LN: both Batch Norms wait
    which = question_key(at, "which")
    at.radio(key=which).set_value(PADDING_CHOICES[0]).run()
    check(at, which)
    assert bn_means(at)[0] == pytest.approx([22 / 8, 27 / 8, 29 / 8])
    assert any("Right" in s.value for s in at.success)
    assert list(at.session_state["quiz_marks"].values()) == [True]

    # a PAD row under naive Batch Norm: wrong first, then right; the first try counts
    pad_row = question_key(at, "padbn")
    at.text_input(key=f"{pad_row}_typed").input("0").run()
    check(at, pad_row)
    at.text_input(key=f"{pad_row}_typed").input(f"{PAD_F1:.3f}").run()
    check(at, pad_row)
    assert len(outputs(at)) == 2  # naive BN and LN; masked BN waits for its own question
    at.run()
    marks = at.session_state["quiz_marks"]
    assert sorted(marks.values()) == [False, True]
    assert any(m.label.startswith("Predictions right") and m.value == "1 / 2" for m in at.metric)


def test_questions_follow_the_example():
    default = open_page({"q": "1"})
    shifted = open_page({"q": "1", "beta": "2", "s": "Hi Nitish\nHow are you"})
    assert question_key(shifted, "padbn") != question_key(default, "padbn")
    key = question_key(shifted, "padbn")
    # rows Hi, Nitish, PAD, How, are, you: f1 = 5, 3, 0, 4, 1, 7
    f1 = np.array([5, 3, 0, 4, 1, 7], float)
    y = -f1.mean() / np.sqrt(f1.var() + 1e-5) + 2
    shifted.text_input(key=f"{key}_typed").input(str(y)).run()
    check(shifted, key)
    assert list(shifted.session_state["quiz_marks"].values()) == [True]


def test_questions_show_on_the_slides_too():
    at = open_page({"present": "1", "slide": "3", "q": "1"})
    assert headers(at) == [f"3. {SECTION_TITLES[2]}"]
    assert not html_frames(at, "feature", "μ, PAD included")
    which = question_key(at, "which")
    at.radio(key=which).set_value(PADDING_CHOICES[2]).run()
    check(at, which)
    assert len(html_frames(at, "feature", "μ, PAD included")) == 1
    assert list(at.session_state["quiz_marks"].values()) == [False]


# ---------------------------------------------------------------- exports


def run_script(source: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def page_script(at: AppTest) -> str:
    return next(c.value for c in at.code if c.value.startswith('"""Reproduces'))


@pytest.mark.parametrize(
    "query",
    [
        {},
        {
            "s": "Hi Nitish\nHow are you today\nzebra",
            "eps": "0.25",
            "w": "Hi:-3,0,2.5",
            "beta": "-2",
        },
    ],
)
def test_the_pytorch_script_reproduces_the_numbers_on_the_page(query):
    at = open_page(query)
    keys = {d.proto.id.rsplit("-", 1)[-1] for d in at.get("download_button")}
    assert keys == {"pad_dl_csv", "pad_dl_json", "pad_dl_script"}
    result = run_script(page_script(at))
    naive, masked, ln = outputs(at)
    for name, table in (("naive", naive), ("masked", masked), ("layer", ln)):
        expected = np.array(result[name]).reshape(-1, len(pad.FEATURES))
        np.testing.assert_allclose(table[list(pad.FEATURES)].to_numpy(), expected, atol=1e-9)
    layer = np.array(result["layer"]).reshape(-1, len(pad.FEATURES))
    pads = ln["token"].str.endswith("[PAD]").to_numpy(bool)
    assert (layer[pads] == float(query.get("beta", 0))).all()
    naive_means, masked_means = bn_means(at)
    np.testing.assert_allclose(naive_means, result["naive_mean"], atol=1e-12)
    np.testing.assert_allclose(masked_means, result["masked_mean"], atol=1e-12)


def test_csv_and_json_hold_the_numbers_on_the_page():
    at = open_page({"beta": "0.5"})
    sentences = pad.parse_sentences(at.session_state["pad_sentences"])
    lab = pad.padding_lab(sentences, "hi-nitish", beta=0.5)
    rows = pd.DataFrame(pex.statistics_rows(lab))
    naive, masked, ln = outputs(at)
    for name, table in (("naive_bn", naive), ("masked_bn", masked), ("ln", ln)):
        page = table[list(pad.FEATURES)].to_numpy().ravel()
        np.testing.assert_allclose(rows[f"{name}_y"], page, atol=1e-12)
    bn_stats = html_frames(at, "feature", "μ, PAD included")[0]
    np.testing.assert_allclose(rows["naive_bn_var"][:3], bn_stats["σ², PAD included"])
    data = json.loads(pex.statistics_json(lab, "hi-nitish"))
    np.testing.assert_allclose(np.array(data["masked_bn"]["y"]).reshape(-1, 3), masked.iloc[:, 1:])
