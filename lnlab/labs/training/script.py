"""The runnable PyTorch script that reproduces a lab run, made from the lab's own source.

The script is the source of data, norms, model and train (their imports of each other
removed, every other import gathered at the top) followed by a main that trains the run's
variants with its settings and prints each one's numbers as a JSON line. Nothing is written
twice: a change to the lab changes the script.
"""

from __future__ import annotations

import inspect
import json

from lnlab.labs.training import data, model, norms, train
from lnlab.labs.training.config import TrainConfig

MODULES = (data, norms, model, train)


def _split(source: str) -> tuple[list[str], list[str]]:
    """A module's top-level import lines (not __future__, not lnlab) and the rest."""
    imports, body = [], []
    for line in source.splitlines():
        if line.startswith(("from __future__", "from lnlab")):
            continue
        (imports if line.startswith(("import ", "from ")) else body).append(line)
    return imports, body


def training_script(config: TrainConfig) -> str:
    """A standalone script: `python lab_run.py` prints one JSON line per chosen variant."""
    imports: list[str] = ["import json"]
    parts = []
    for module in MODULES:
        top, body = _split(inspect.getsource(module))
        imports += [line for line in top if line not in imports]
        parts.append(f"# {'-' * 60} {module.__name__.rsplit('.', 1)[-1]}.py\n" + "\n".join(body))
    settings = {
        "layers": config.layers,
        "lr": config.lr,
        "warmup": config.warmup,
        "padding": config.padding,
        "steps": config.steps,
        "seed": config.seed,
    }
    main = f"""

# {"-" * 60} the run
if __name__ == "__main__":
    torch.set_num_threads(1)  # as the lab's worker: the same numbers
    settings = {settings!r}
    for variant in {list(config.variants)!r}:
        run = train_variant(variant, **settings)
        print(json.dumps({{
            "variant": variant,
            "final_loss": run.losses[-1],
            "eval_loss": run.eval_loss,
            "grad_norms_at_init": run.grad_norms,
        }}))
"""
    header = (
        f'"""lnlab training lab: {", ".join(config.variants)}; {json.dumps(settings)}.\n\n'
        'Made by lnlab from its own source; needs only torch. Run: python lab_run.py\n"""\n\n'
    )
    return header + "\n".join(imports) + "\n\n" + "\n\n".join(parts) + main
