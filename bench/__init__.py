"""Benchmarks: they print numbers and never pass or fail."""
