"""The GPU page's benchmark sized from the device, per dtype, on CUDA:
`python -m bench.gpu_sizes OUT.json` (prints each run, writes them as JSON). Needs a CUDA GPU;
results in bench/results/gpu_h100.md."""

import json
import sys

import torch

from lnlab.labs.gpu import benchmark, memory

print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name())
m = memory.device_memory("cuda")
print("memory:", m)
out = []
for dtype in ("float32", "bfloat16", "float16"):
    shape = benchmark.suggested_shape("cuda", dtype)
    small = (4, 512, 1024)
    for label, sh in (("suggested", shape), ("small", small)):
        r = benchmark.timed_run(sh, "cuda", dtype, 60.0)
        rows = benchmark.scale_up_table(r)
        print(
            f"\n{dtype} {label} {sh} x={r.x_bytes / 2**20:.0f} MiB elapsed {r.elapsed_s:.1f} s "
            f"max_diff {r.max_diff:.2e}"
        )
        print(r.memory_text())
        for row in rows:
            print("  ", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
        out.append(
            {
                "dtype": dtype,
                "label": label,
                "shape": sh,
                "level": r.level.kind,
                "memory_text": r.memory_text(),
                "rows": rows,
            }
        )
with open(sys.argv[1], "w") as f:
    json.dump(out, f, indent=1, default=str)
