"""Where the app touches Streamlit's internals, and why: the one folder that may (tests/
test_layers.py keeps it so). Streamlit is pinned at 1.67; tests/ui/test_runtime.py fails when a
patched function or read attribute moves.

`install()`, called once by the app's lifespan (lnlab.ui.server), patches:
- `stale`: a widget value a page sent before it saw the server change it is left out
  (SessionState.set_widgets_from_proto);
- `turns`: every script run waits for its pace and its fair turn in a busy process
  (script_runner.exec_func_with_error_handling);
- `failover`: a fragment's rerun asked of a new process, which has never run the page, runs
  the whole page instead of being dropped (AppSession.request_rerun); a browser's "clear
  cache" message, which empties every visitor's caches, does nothing outside development
  (AppSession._handle_clear_cache_request);
- `links`: a link Streamlit drops for its size reaches the page as a notice
  (app_session.sanitize_query_string);
- Streamlit's once-a-process check for a REPL, which reads the whole call stack's source on
  the first element drawn (0.17 s on a new process's first page): skipped, the app is served.
`sessions` reads the script run (session, page, fragment, address) and sends the browser its
address and a fragment's timer.
"""

from __future__ import annotations


def install() -> None:
    """Patch Streamlit for the app's server (idempotent). AppTest runs without them."""
    import streamlit.delta_generator

    from lnlab.ui.runtime import failover, links, stale, turns

    links.mark_dropped_links()
    stale.install()
    turns.install()
    failover.install()
    failover.ignore_clear_cache()
    streamlit.delta_generator._use_warning_has_been_displayed = True
