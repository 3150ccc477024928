"""What the training lab's default run shows on seeds 0-19: `python -m bench.training_claims`.

Not a timing: the lab states every effect from the run on screen (lnlab.labs.training.lesson),
and this records, seed by seed, the numbers behind each statement and the verdict the page
gives, so that what holds on every seed and what does not is on record
(bench/results/training_claims.md). The gradient and depth statements are also checked on
these seeds by tests/labs/training/test_claims.py; the trained ones take a whole run per seed
(8-31 s each on one CPU thread here, by the load), too slow for `make test`. Runs on its own, like
bench.load: `--seeds N` for fewer.
"""

from __future__ import annotations

import argparse
import dataclasses
import os

from bench.report import record
from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.lesson import CLEAR, clearly, label
from lnlab.labs.training.run import LabResult, final_loss, fluctuation, run_lab

WORDS = {1: "yes", 0: "within 20 %", -1: "no"}


def row(result: LabResult) -> tuple[str, ...]:
    """One seed's numbers and the verdicts the page gives on them."""
    runs = {r.variant: r for r in result.runs}
    post, pre, naive, masked = (runs[v] for v in ("post", "pre", "bn", "mbn"))
    on, off = final_loss(result.warmup_on), final_loss(result.warmup_off)
    f_naive, f_masked = fluctuation(naive.bn_var), fluctuation(masked.bn_var)
    gaps = {v: r.eval_loss - r.eval_loss_train_mode for v, r in runs.items()}
    widest = max(gaps, key=lambda v: abs(gaps[v]))
    return (
        str(result.config.seed),
        f"{final_loss(post):.3f} / {final_loss(pre):.3f}",
        WORDS[clearly(final_loss(post), final_loss(pre))],
        f"{on:.3f} / {off:.3f}",
        WORDS[clearly(off, on)],
        f"{post.grad_norms[-1] / pre.grad_norms[-1]:.2f}x",
        WORDS[clearly(post.grad_norms[-1], post.grad_norms[0])],
        f"{100 * f_naive:.1f}% / {100 * f_masked:.1f}% ({f_naive / f_masked:.1f}x)",
        WORDS[clearly(f_naive, f_masked)],
        f"{label(widest)} {gaps[widest]:+.3f}",
    )


HEADER = (
    "seed",
    "final loss post / pre",
    "post-LN worse",
    "post-LN warm-up on / off",
    "warm-up helps",
    "last block post / pre",
    "post-LN grows to the output",
    "batch variance naive / masked",
    "naive varies more",
    "widest eval - train gap",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    seeds = range(parser.parse_args().seeds)
    results = [run_lab(dataclasses.replace(TrainConfig(), seed=seed)) for seed in seeds]
    rows = [row(r) for r in results]
    counted = {
        column: sum(r[k] == "yes" for r in rows)
        for k, column in enumerate(HEADER)
        if all(r[k] in WORDS.values() for r in rows)
    }
    totals = "; ".join(f"{column}: {n} of {len(rows)}" for column, n in counted.items())
    record(
        "training_claims",
        "Training lab: the default run's statements, seed by seed",
        [HEADER, *rows],
        f"The default configuration ({TrainConfig()}), one CPU thread. A verdict is yes "
        f"when the first number is over {CLEAR} times the second, no when under 1/{CLEAR} "
        f"times, as the page decides. Said yes: {totals}. Load average at the end: "
        f"{os.getloadavg()[0]:.1f}.",
    )


if __name__ == "__main__":
    main()
