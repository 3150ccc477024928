"""Tables as HTML: every number rounded by lnlab.core.numbers.fmt against its column's scale, with
its exact value in the cell's tooltip, and text escaped (labels are whatever a user typed).

HTML rather than Streamlit's canvas grid, so that a projector's font sizes apply and a browser
test can measure them, and the numbers read the same as everywhere else in the app.

For screen readers: every column header has a name (an unnamed one reads "label"), a row's
label is the header of its row, and the table sits in a region named `name`, which the assist
script (lnlab/ui/assets/assist.js) makes a tab stop when it scrolls sideways, so a keyboard can
scroll it.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from lnlab.core.numbers import exact, fmt, scale_of

UNNAMED = "label"  # what a screen reader hears for a column without a name


def table_name(frame: pd.DataFrame, name: str = "") -> str:
    """What the table is called: `name`, or its first columns ("Table of token, x1, x2, x3")."""
    if name:
        return name
    columns = [str(c) for c in frame.columns[:4] if str(c)]
    more = ", …" if len(frame.columns) > 4 else ""
    return f"Table of {', '.join(columns)}{more}" if columns else "Table"


def table_html(frame: pd.DataFrame, name: str = "") -> str:
    """`frame` as an HTML table: escaped labels, rounded numbers with their exact tooltips, in a
    region called `name` (table_name)."""
    scales = {
        c: scale_of(frame[c].to_numpy(dtype=np.float64))
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c])
    }
    head = "".join(_header(c) for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = []
        for k, (c, v) in enumerate(zip(frame.columns, values, strict=True)):
            if c in scales:
                cells.append(f'<td title="{exact(v)}">{fmt(v, scales[c])}</td>')
            elif k == 0:  # a row's label: the header of its row
                cells.append(f'<th scope="row" class="label">{html.escape(str(v))}</th>')
            else:
                cells.append(f'<td class="label">{html.escape(str(v))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    label = html.escape(table_name(frame, name), quote=True)
    return (
        f'<div class="lnlab-table-wrap" role="region" aria-label="{label}">'
        '<table class="lnlab-table"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _header(column: object) -> str:
    text = str(column).strip()
    inner = html.escape(text) if text else f'<span class="lnlab-sr-only">{UNNAMED}</span>'
    return f'<th scope="col">{inner}</th>'
