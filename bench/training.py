"""Training lab timings: `python -m bench.training`.

For each configuration: the lab's whole run (lnlab.labs.training.run.run_lab, every variant and
post-LN's other warm-up setting, one CPU thread, as the worker runs it) and its time per
training step, against a floor measured in the same run: torch's own nn.TransformerEncoder
of the same size (d 32, 2 heads, MLP 128, same blocks, post- and pre-LN), one Adam step on
a batch of the same shape, with the key-padding mask. Then the worker process's start
(spawn, import torch), which the first run after a server start pays once.
"""

from __future__ import annotations

import os
import statistics
import time

import torch

from bench.report import record
from lnlab.labs.training import data
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.model import D_MODEL, HEADS
from lnlab.labs.training.run import run_lab
from lnlab.labs.training.train import BATCH
from lnlab.labs.training.worker import Lab
from lnlab.serving.worker import Worker

CONFIGS = (
    TrainConfig(variants=("post", "pre"), layers=1, steps=20),  # the tests' tiny run
    TrainConfig(),  # the page's default
)


def floor_ms(layers: int, steps: int = 30) -> float:
    """Median ms of one Adam step of nn.TransformerEncoder of the lab's size."""
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        D_MODEL, HEADS, 4 * D_MODEL, dropout=0.0, activation="gelu", batch_first=True
    )
    encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    embed = torch.nn.Embedding(data.VOCAB, D_MODEL)
    head = torch.nn.Linear(D_MODEL, data.SEQ)
    model = torch.nn.ModuleList([embed, encoder, head])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=True)
    generator = torch.Generator().manual_seed(0)
    times = []
    for _ in range(steps):
        tokens, mask, targets = data.make_batch(generator, BATCH, 0.5)
        start = time.perf_counter()
        logits = head(encoder(embed(tokens), src_key_padding_mask=~mask))
        loss = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), targets.flatten(), ignore_index=-100
        )
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times[5:])


def worker_start_s() -> float:
    """Seconds from a cold worker to the first result of the tiny run."""
    lab = Lab(Worker())
    start = time.perf_counter()
    try:
        lab.train(CONFIGS[0], "bench")
    finally:
        lab.worker.stop()
    return time.perf_counter() - start


def main() -> None:
    torch.set_num_threads(1)
    rows = [
        (
            "configuration",
            "runs x steps",
            "whole run (s)",
            "lab ms/step",
            "nn.TransformerEncoder ms/step",
            "lab / floor",
        )
    ]
    for config in CONFIGS:
        result = run_lab(config)
        steps = config.trained_runs * config.steps
        per_step = (
            1e3
            * sum(r.seconds for r in (*result.runs, result.warmup_on))
            / ((len(result.runs) + 1) * config.steps)
        )
        floor = floor_ms(config.layers)
        rows.append(
            (
                f"{'+'.join(config.variants)}, {config.layers} blocks, {config.steps} steps",
                f"{config.trained_runs} x {config.steps} = {steps}",
                f"{result.seconds:.1f}",
                f"{per_step:.1f}",
                f"{floor:.1f}",
                f"{per_step / floor:.1f}x",
            )
        )
    cold = worker_start_s()
    load = f"{os.getloadavg()[0]:.1f}"
    record(
        "training",
        "Training lab timings (CPU, one thread)",
        rows,
        f"A cold worker (spawn, import torch) plus the tiny run: {cold:.1f} s. torch "
        f"{torch.__version__}. Load average at the end: {load} (the machine's 2 cores are "
        "shared with other work; timings grow with it). lab ms/step includes the held-out "
        "evaluation and the gradients at initialisation of each variant.",
    )


if __name__ == "__main__":
    main()
