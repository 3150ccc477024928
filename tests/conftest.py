"""Shared test settings, and the class store's databases (`db_url`: SQLite, then PostgreSQL)."""

from db import db_url, postgres_url  # noqa: F401 (fixtures, for any test that asks for them)
from hypothesis import settings

# Timings never decide a test here: the machines are shared and noisy, so no deadlines.
settings.register_profile("lnlab", deadline=None)
settings.load_profile("lnlab")
