"""Tables as HTML: every number rounded by lnlab.core.numbers.fmt against its column's scale, with
its exact value in the cell's tooltip, and text escaped (labels are whatever a user typed).

HTML rather than Streamlit's canvas grid, so that a projector's font sizes apply and a browser
test can measure them, and the numbers read the same as everywhere else in the app.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from lnlab.core.numbers import exact, fmt, scale_of


def table_html(frame: pd.DataFrame) -> str:
    """`frame` as an HTML table: escaped labels, rounded numbers with their exact tooltips."""
    scales = {
        c: scale_of(frame[c].to_numpy(dtype=np.float64))
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c])
    }
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = []
        for c, v in zip(frame.columns, values, strict=True):
            if c in scales:
                cells.append(f'<td title="{exact(v)}">{fmt(v, scales[c])}</td>')
            else:
                cells.append(f'<td class="label">{html.escape(str(v))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        '<div class="lnlab-table-wrap"><table class="lnlab-table"><thead><tr>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
