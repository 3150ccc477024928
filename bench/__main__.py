"""`python -m bench`: the benchmarks in turn; each prints its table and appends it to results/.

bench.load (a class of 30 to 300 through HAProxy, about 12 minutes) and bench.lighthouse
(Lighthouse on every page through HAProxy, 5 to 20 minutes) run on their own:
`python -m bench.load`, `python -m bench.lighthouse`.
"""

import importlib

BENCHMARKS = (
    "bench.pages",
    "bench.throughput",
    "bench.browser",
    "bench.sessions",
    "bench.clicks",
    "bench.live",
    "bench.live_padding",
    "bench.cold",
    "bench.flood",
    "bench.messages",
    "bench.oversized",
    "bench.classroom",
    "bench.class_instant",
    "bench.heavy_work",
    "bench.gpu_fairness",
    "bench.training",
    "bench.training_line",
    "bench.axe",
)

for name in BENCHMARKS:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError:
        print(f"({name} is not there; skipped)")
        continue
    module.main()
