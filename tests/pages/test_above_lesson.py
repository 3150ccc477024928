"""lnlab.ui.rerun.above_lesson on the pages: a whole-page run records the boxes drawn above the
lesson, never a widget drawn inside the lesson's fragment (its section's own controls, the
section itself), so a click in the lesson never turns into a whole-page run by it."""

from helpers import page_test

from lnlab.ui import rerun, state


def test_step_through_records_its_boxes_not_the_dy_box_of_the_section_shown():
    at = page_test("pages/step_through.py", {"v": "1", "step": "10"}).run()  # 10: dy
    assert not at.exception
    assert at.session_state["st_slides"].sections[at.session_state["st_step"]].key == "dy"
    assert any(w.key == "st_dy" for w in at.text_input)  # drawn, inside the lesson
    above = set(at.session_state[state.key(rerun.Reruns)].above)
    assert {"st_text", "st_preset", "st_eps", "st_gamma", "st_beta", "st_token"} <= above
    assert not above & {"st_dy", "st_step", "step_through_all"}
