"""Shared test settings, the class store's databases (`db_url`: SQLite, then PostgreSQL), and
the `services` mark (`make test-fast` runs what has neither it nor `browser`)."""

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

# What makes a test need a service (`-m "not services"` leaves them out): the whole module
# (HAProxy in front of app processes started as servers: the local cluster, `make cluster`);
# a fixture (a PostgreSQL cluster, started for the session or the test); the `db_url` case
# that asks for PostgreSQL; a helper the test calls (HAProxy's own check of a config). The
# browser tests carry their own mark (tests/browser/).
SERVICE_MODULES = ("serving/test_cluster.py",)
SERVICE_FIXTURES = {"postgres_url", "restartable_postgres"}
SERVICE_CASES = {"db_url": "postgresql"}
SERVICE_CALLS = {"_haproxy_check"}


def _needs_a_service(item: pytest.Item) -> bool:
    path = item.path.as_posix()
    if any(path.endswith("tests/" + module) for module in SERVICE_MODULES):
        return True
    if SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(params.get(name) == case for name, case in SERVICE_CASES.items()):
        return True
    code = getattr(getattr(item, "function", None), "__code__", None)
    return code is not None and bool(SERVICE_CALLS & set(code.co_names))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _needs_a_service(item):
            item.add_marker(pytest.mark.services)


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
