"""Shared test settings, and the class store's databases (`db_url`: SQLite, then PostgreSQL)."""

import os

import pytest
from db import db_url, postgres_url  # noqa: F401 (fixtures, for any test that asks for them)
from hypothesis import settings

from lnlab.classroom.store import URL_ENV

# Timings never decide a test here: the machines are shared and noisy, so no deadlines.
settings.register_profile("lnlab", deadline=None)
settings.load_profile("lnlab")


@pytest.fixture(autouse=True, scope="session")
def _own_database(tmp_path_factory: pytest.TempPathFactory):
    """The app's default database, for this test run alone: the heavy-work slot lives there
    (lnlab.fair_queue), and another run or a server on this checkout must not share it."""
    before = os.environ.get(URL_ENV)
    os.environ[URL_ENV] = f"sqlite:///{tmp_path_factory.mktemp('app') / 'app.db'}"
    yield
    if before is None:
        del os.environ[URL_ENV]
    else:
        os.environ[URL_ENV] = before
