"""The home page and the navigation, through home.py as a visitor meets them."""

from pathlib import Path

import torch
from helpers import ROOT
from helpers import formulas as drawn
from streamlit.testing.v1 import AppTest

from lnlab.ui import PAGES
from lnlab.ui.style import PRESENTER_CSS


def home() -> AppTest:
    return AppTest.from_file(ROOT / "home.py", default_timeout=60).run()


def test_home_loads_with_steps_and_links():
    at = home()
    assert not at.exception
    assert at.title[0].value == "Layer Normalization, step by step"
    formulas = " ".join(drawn(at))
    for symbol in (r"\mu", r"\sigma^2", r"\sigma_\epsilon", r"\hat{x}_i", r"\gamma_i"):
        assert symbol in formulas
    links = [el.proto.page for el in at.get("page_link")]
    assert links[-len(PAGES) :] == [Path(p.path).stem for p in PAGES]


def test_device_badge_names_what_torch_would_use():
    badge = next(el.value for el in home().markdown if "torch would compute on" in el.value)
    if torch.cuda.is_available():
        assert torch.cuda.get_device_name(0) in badge
    else:
        assert badge.endswith("CPU: no GPU found]")


def test_every_page_opens():
    """AppTest runs a switched-to page without home.py; the browser tests cover the router."""
    at = home()
    for page in PAGES:
        at.switch_page(page.path).run()
        assert not at.exception, page.path
    at.switch_page("home.py").run()
    assert at.title[0].value == "Layer Normalization, step by step"


def test_presenter_mode_from_the_url_and_back():
    at = AppTest.from_file(ROOT / "home.py", default_timeout=60)
    at.query_params["present"] = "1"
    at.run()
    assert at.session_state["present"] is True
    assert any(_presenter_css(h.proto.body) for h in at.get("html"))  # no sidebar, big text
    at.button(key="present_exit").click().run()
    assert at.session_state["present"] is False
    assert not any(_presenter_css(h.proto.body) for h in at.get("html"))  # the CSS is gone


def _presenter_css(body: str) -> bool:
    return body.strip() == PRESENTER_CSS.strip()
