"""Where the app's own files are, on disk and in the browser."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

STATIC = Path(__file__).resolve().parents[2] / "static"  # served at app/static/


def base_path() -> str:
    """The path the app is served at, behind any base path: "/" or "/course/"."""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}/" if base else "/"


def static_base() -> str:
    """The path the app serves static/ at (server.enableStaticServing), behind any base path."""
    return f"{base_path()}app/static/"
