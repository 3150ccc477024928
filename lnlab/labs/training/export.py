"""The training lab's download: the runnable PyTorch script that reproduces the run on screen."""

from __future__ import annotations

from lnlab.labs.training.config import TrainConfig
from lnlab.labs.training.script import training_script
from lnlab.teach.export import Download, Exports


def exports(config: TrainConfig) -> Exports:
    """The lab's own source with `config`'s settings, as a standalone script."""
    script = training_script(config)
    return Exports(
        (Download("Script (.py)", script, "lab_run.py", "text/x-python", "tr_script", "code"),),
        "A standalone PyTorch script: the lab's own source and this run's settings. "
        "`python lab_run.py` prints each variant's final and held-out loss.",
        script=script,
        script_title="The PyTorch script",
    )
