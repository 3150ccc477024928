"""Opening a page as the app serves it: through app.py, so links and the sidebar resolve."""

from collections.abc import Mapping
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_test(
    path: str, query: Mapping[str, str | list[str]] | None = None, timeout: float = 60
) -> AppTest:
    """An AppTest of page `path` (e.g. "pages/padding.py") with app.py as the entrypoint,
    opened from a link with the `query` parameters.

    Not run yet: set session state first if needed, then call `.run()`.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    for name, value in (query or {}).items():
        at.query_params[name] = value
    return at.switch_page(path)
