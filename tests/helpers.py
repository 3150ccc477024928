"""Opening a page as the app serves it: through app.py, so links and the sidebar resolve."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_test(path: str, timeout: float = 60) -> AppTest:
    """An AppTest of page `path` (e.g. "pages/padding.py") with app.py as the entrypoint.

    Not run yet: set query parameters or session state first, then call `.run()`.
    """
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    return at.switch_page(path)
