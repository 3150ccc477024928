"""lnlab.ui.runtime.stale: which values a page sends are echoes of what it showed before the
server's change. The whole path, with a page's replies held back, is tests/browser/test_stale.py."""

import pytest
from streamlit.runtime.state.session_state import SessionState

from lnlab.ui.runtime import stale

CUSTOM, PRESET = "custom", "token-2468"


@pytest.mark.parametrize(
    ("unchanged", "value", "server", "shown", "address_seen", "expected"),
    [
        # the server made the preset Custom in a run whose reply the page has not drawn
        (True, PRESET, CUSTOM, CUSTOM, False, True),
        # ... in a run that did not finish (a callback, then a newer message): never shown
        (True, PRESET, CUSTOM, PRESET, True, True),
        (True, PRESET, CUSTOM, PRESET, False, True),
        # the page has drawn Custom and the visitor chose the preset again
        (True, PRESET, CUSTOM, CUSTOM, True, False),
        # the visitor changed it: always theirs
        (False, "hello", CUSTOM, CUSTOM, False, False),
        (False, PRESET, CUSTOM, CUSTOM, False, False),
        # the same value as the server's: nothing to leave out
        (True, CUSTOM, CUSTOM, PRESET, False, False),
    ],
)
def test_is_stale(unchanged, value, server, shown, address_seen, expected):
    got = stale.is_stale(
        unchanged=unchanged, value=value, server=server, shown=shown, address_seen=address_seen
    )
    assert got is expected


def test_install_wraps_once():
    original = SessionState.set_widgets_from_proto
    try:
        stale.install()
        wrapped = SessionState.set_widgets_from_proto
        stale.install()
        assert SessionState.set_widgets_from_proto is wrapped
        assert wrapped is not original
    finally:
        SessionState.set_widgets_from_proto = original


def test_an_address_is_its_links_state_in_order():
    params = [("x", "1,2"), ("present", "1"), ("v", "1"), ("tok", "2"), ("tok", "3")]
    assert stale.address(params, ignore=("present",)) == repr(
        [("tok", ["2", "3"]), ("v", "1"), ("x", "1,2")]
    )
    unique = params[:4]  # the order of the parameters does not matter
    assert stale.address(reversed(unique), ("present",)) == stale.address(unique, ("present",))
