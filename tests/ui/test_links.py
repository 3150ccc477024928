"""ui.open_link / ui.share_link on a small page: round trip through the URL, bad links."""

import numpy as np
from streamlit.testing.v1 import AppTest


def tiny_page():
    import numpy as np
    import streamlit as st

    from lnlab import ui
    from lnlab.core.parse import format_embeddings, parse_embeddings
    from lnlab.teach.links import Field, Param

    fields = (
        Field(Param("x", "matrix"), "t_text", format_embeddings, parse_embeddings),
        Field(Param("eps", "float", lo=0.0, hi=1.0), "t_eps"),
    )
    ui.open_link("tiny", fields)
    st.session_state.setdefault("t_text", "2, 4, 6, 8")
    st.session_state.setdefault("t_eps", 1e-5)
    text = st.text_area("embeddings", key="t_text")
    eps = st.number_input("eps", key="t_eps", format="%g", min_value=0.0, max_value=1.0)
    x = ui.last_good("t_x", lambda: parse_embeddings(text), None)
    st.write(f"sum={float(np.sum(x))} eps={eps}")
    ui.share_link("tiny", fields)


def run(query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_function(tiny_page, default_timeout=30)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def shown(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("sum="))


def test_a_page_just_opened_leaves_the_url_alone_until_an_edit():
    at = run()
    assert not at.exception
    assert shown(at) == "sum=20.0 eps=1e-05"
    assert dict(at.query_params) == {}  # no history entry: Back still leaves the page
    at.number_input(key="t_eps").set_value(0.5).run()
    assert dict(at.query_params) == {"v": "1", "x": "2,4,6,8", "eps": "0.5"}
    at.number_input(key="t_eps").set_value(1e-5).run()
    assert at.query_params["eps"] == "1e-05"  # back to the start: the URL says so too


def test_a_link_opens_its_example_and_edits_are_kept():
    at = run({"v": "1", "x": "1,2;3,4.5", "eps": "0.001"})
    assert shown(at) == "sum=10.5 eps=0.001"
    at.text_area(key="t_text").input("1, 1").run()
    assert shown(at) == "sum=2.0 eps=0.001"  # the rerun does not re-apply the old link
    assert at.query_params["x"] == "1,1"


def test_round_trip_state_link_state():
    first = run({"x": "0.1,0.3,-0.2,0.8", "eps": "1e-12"})
    link = dict(first.query_params)
    second = run(link)
    assert shown(second) == shown(first)
    assert np.isclose(float(shown(second).split()[0][4:]), 1.0)


def test_bad_links_open_the_default_with_a_notice():
    for query in ({"x": "1,x"}, {"eps": "-3"}, {"v": "9"}, {"x": "1e999"}, {"junk": "1"}):
        at = run(query)
        assert not at.exception, query
        assert shown(at) == "sum=20.0 eps=1e-05", query
        assert "default example" in at.warning[0].value, query
