"""lnlab.teach.tables: a table a screen reader can walk (WCAG 2.2: 1.3.1, 2.1.1, 4.1.2)."""

from __future__ import annotations

import pandas as pd

from lnlab.teach.tables import table_html, table_name


def test_headers_name_their_columns_and_rows_and_the_region_is_named():
    frame = pd.DataFrame({"token": ["<b>hi</b>", "PAD"], "x1": [1.0, 0.0], "x2": [2.5, 0.0]})
    body = table_html(frame, 'Tokens "as typed"')
    assert body.startswith(
        '<div class="lnlab-table-wrap" role="region" aria-label="Tokens &quot;as typed&quot;">'
    )
    assert '<th scope="col">token</th><th scope="col">x1</th><th scope="col">x2</th>' in body
    assert '<th scope="row" class="label">&lt;b&gt;hi&lt;/b&gt;</th>' in body
    assert '<td title="2.5">2.5</td>' in body


def test_a_column_without_a_name_is_read_as_label():
    body = table_html(pd.DataFrame({"": ["x"], "f1": [1.0]}))
    assert '<th scope="col"><span class="lnlab-sr-only">label</span></th>' in body


def test_a_table_without_a_name_is_called_by_its_columns():
    assert table_name(pd.DataFrame(columns=["a", "b"])) == "Table of a, b"
    wide = pd.DataFrame(columns=["token", "f1", "f2", "f3", "f4"])
    assert table_name(wide) == "Table of token, f1, f2, f3, …"
    assert table_name(wide, "Input") == "Input"
    assert table_name(pd.DataFrame()) == "Table"
