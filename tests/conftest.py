"""Shared test settings."""

from hypothesis import settings

# Timings never decide a test here: the machines are shared and noisy, so no deadlines.
settings.register_profile("lnlab", deadline=None)
settings.load_profile("lnlab")
