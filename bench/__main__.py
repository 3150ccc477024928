"""`python -m bench`: every benchmark in turn; each prints its table and appends it to results/."""

import importlib

BENCHMARKS = (
    "bench.pages",
    "bench.throughput",
    "bench.browser",
    "bench.sessions",
    "bench.classroom",
    "bench.fair_queue",
    "bench.gpu_fairness",
    "bench.training",
)

for name in BENCHMARKS:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        print(f"({name} is not there; skipped)")
        continue
    module.main()
