"""lnlab.labs.step_through.state: the step-through page's state rules, on a plain dict."""

import numpy as np

from lnlab.core.parse import parse_embeddings
from lnlab.labs.step_through import state
from lnlab.labs.step_through.token import TokenInputs
from lnlab.teach.presets import CUSTOM


def fresh(**given) -> dict:
    s = dict(given)
    state.set_defaults(s)
    return s


def test_defaults_are_the_first_preset():
    s = fresh()
    assert s["st_preset"] == "token-2468"
    assert (s["st_text"], s["st_labels"], s["st_token"], s["st_step"]) == (
        "2, 4, 6, 8",
        "token",
        0,
        0,
    )
    assert s["st_eps"] == 1e-5


def test_a_links_own_embeddings_get_no_preset_labels():
    assert fresh(st_text="1, 2\n3, 4")["st_labels"] == ""


def test_an_edit_that_no_longer_fits_the_preset_labels_drops_them():
    s = fresh(st_preset="hello")
    state.load_preset(s)
    s["st_text"] = "1, 2, 3"
    state.text_edited(s)
    assert s["st_preset"] == CUSTOM and s["st_labels"] == ""


def test_an_edit_with_as_many_tokens_keeps_the_labels():
    s = fresh()
    s["st_text"] = "1, 2, 3"  # one token, like the preset's one label
    state.text_edited(s)
    assert s["st_preset"] == CUSTOM and s["st_labels"] == "token"


def test_a_grid_edit_rewrites_the_text_and_leaves_the_preset():
    s = fresh()
    s["st_grid_base"] = (parse_embeddings(s["st_text"]), ["token"])
    s["st_grid"] = {"edited_rows": {"0": {"f1": 3}}, "added_rows": [], "deleted_rows": []}
    state.grid_changed(s)
    assert s["st_text"] == "3, 4, 6, 8" and s["st_preset"] == CUSTOM


def test_link_fields_travel_what_the_page_shows():
    s = fresh()
    s["st_inputs"] = TokenInputs(
        np.array([[1.0, 2.0]]), ("a",), 0, 1e-5, np.ones(2), np.array([0.0, 1.0])
    )
    fields = {f.param.name: f for f in state.link_fields(s)}
    assert fields["gamma"].from_widget("junk").tolist() == [1.0]  # one value for all
    assert fields["beta"].from_widget("junk").tolist() == [0.0, 1.0]
    assert fields["labels"].from_widget("") == "a"
    assert fields["step"].param.hi == state.SECTION_COUNT == 15
