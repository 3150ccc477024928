"""`python -m bench`: the benchmarks in turn; each prints its table and appends it to results/.

bench.load (a class of 30 to 300 through HAProxy, about 12 minutes) runs on its own:
`python -m bench.load`.
"""

import importlib

BENCHMARKS = (
    "bench.pages",
    "bench.throughput",
    "bench.browser",
    "bench.sessions",
    "bench.clicks",
    "bench.live",
    "bench.cold",
    "bench.flood",
    "bench.messages",
    "bench.oversized",
    "bench.classroom",
    "bench.heavy_work",
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
