"""Print a benchmark table and append it, with the machine and the date, to bench/results/."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def machine() -> str:
    """One line about where the numbers were measured."""
    return f"{platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def load_average(before: Sequence[float], after: Sequence[float]) -> str:
    """The line every benchmark's notes give, since other work shares the cores: "Load average
    (1, 5, 15 min) before: 0.4, 0.9, 1.2; after: 1.9, 1.1, 1.3 on 2 CPUs"."""

    def three(load: Sequence[float]) -> str:
        return ", ".join(f"{v:.1f}" for v in load)

    return (
        f"Load average (1, 5, 15 min) before: {three(before)}; after: {three(after)} "
        f"on {os.cpu_count()} CPUs"
    )


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """The first row is the header."""
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(lines)


def record(name: str, title: str, rows: Sequence[Sequence[str]], notes: str = "") -> str:
    """Print the table and append it to bench/results/<name>.md; returns the text."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = "python -m " + " ".join(["bench." + name, *sys.argv[1:]])
    text = (
        f"## {title}\n\n{stamp}; {machine()}\n\nCommand: `{command}`\n\n"
        f"{markdown_table(rows)}\n" + (f"\n{notes}\n" if notes else "")
    )
    print(text)
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / f"{name}.md", "a", encoding="utf-8") as out:
        out.write(text + "\n")
    return text
