"""Shared test settings, and the class store's databases (`db_url`: SQLite, then PostgreSQL)."""

import os
import sys

import pytest
from db import db_url, postgres_url, restartable_postgres  # noqa: F401 (fixtures, for any test that asks for them)
from hypothesis import settings

from lnlab.classroom import store
from lnlab.classroom.store import URL_ENV

# Timings never decide a test here: the machines are shared and noisy, so no deadlines.
settings.register_profile("lnlab", deadline=None)
settings.load_profile("lnlab")

_PYTEST_MAIN = sys.modules["__main__"]


@pytest.fixture(autouse=True)
def _pytest_main():
    """Give each test pytest's own `__main__`. AppTest runs a page as `sys.modules["__main__"]`
    (as Streamlit's server does) and leaves it there, and a process a later test starts with
    "spawn" would re-run that page's temporary file and die."""
    sys.modules["__main__"] = _PYTEST_MAIN
    yield


@pytest.fixture(autouse=True, scope="session")
def _own_database(tmp_path_factory: pytest.TempPathFactory):
    """The app's default database, for this test run alone: the heavy-work line lives there
    (lnlab.serving.heavy_work), and another run or a server on this checkout must not share it."""
    before = os.environ.get(URL_ENV)
    os.environ[URL_ENV] = f"sqlite:///{tmp_path_factory.mktemp('app') / 'app.db'}"
    yield
    if before is None:
        del os.environ[URL_ENV]
    else:
        os.environ[URL_ENV] = before


@pytest.fixture
def classes(tmp_path, monkeypatch):
    """The app's class store, in a fresh SQLite file (the Class page and the training
    lab's class questions)."""
    monkeypatch.setenv(store.URL_ENV, f"sqlite:///{tmp_path / 'classes.db'}")
    monkeypatch.setattr(store, "_default", None)
    yield store.default_store()
    store.default_store().close()
