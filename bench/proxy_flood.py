"""Floods from one address through HAProxy, and a visitor from another address.

Run: `.venv/bin/python -m bench.proxy_flood`. Starts the local cluster as `make cluster N=2`
does (the same command, on free ports), a fresh one for each row:

- reloads, limits off / default limits: FLOODERS clients from one address (127.0.0.2) each
  open a session of /step_through, wait for its whole-page run, close it and open the next
  (holding down a browser's reload key): HAProxy sees every new session;
- reruns, default limits: each flooder keeps one session and asks it for whole-page runs back
  to back (a script typing into the page): inside an open websocket, which HAProxy does not
  see; the app paces each session (lnlab.serving.pace).

A bystander (127.0.0.3) opens /step_through IDLE_VISITS times first (idle), then one visit
after another while the flood lasts: seconds from connecting to its first run's end, with
step 1's metric checked. Reported: the bystander's times (p50 / p95 / max), the sessions the
flood opened and the 429s it got. Appends to bench/results/proxy_flood.md. The flooders and
the bystander (one Python process) share the cores with the cluster.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from bench.report import load_average, record
from harness.proxy import (
    FLOOD_S,
    FLOODERS,
    RETRY_AFTER_429_S,
    VISIT_TIMEOUT_S,
    Flood,
    flood,
    make_cluster,
    spread,
    visit,
)
from harness.sessions import WrongPage
from lnlab.serving import haproxy

IDLE_VISITS = 5
VISIT_EVERY_S = 0.25  # the bystander opens the page at most 4 times a second: a person
# reloading, under the 12 new sessions a second that HAProxy lets an address open (faster, it
# got 429s from its own visits, which a second run of this bench showed)
OFF = (  # `make cluster` options that put the per-address limits out of reach
    "--requests-per-10s 1000000 --connections-per-10s 1000000 --max-open-per-client 1000000 "
    "--websockets-per-10s 1000000 --max-websockets-per-client 1000000"
)


@dataclass
class Run:
    name: str
    idle_s: list[float] = field(default_factory=list)
    during_s: list[float] = field(default_factory=list)
    bystander_errors: dict[str, int] = field(default_factory=dict)
    flood: Flood = field(default_factory=Flood)


async def measure(url: str, run: Run, kind: str, seconds: float = FLOOD_S) -> None:
    """The bystander idle, then during a flood of `kind` for `seconds`."""
    await visit(url)  # each process's first visit is slower (not counted)
    await visit(url)
    for _ in range(IDLE_VISITS):
        run.idle_s.append(await visit(url))
        await asyncio.sleep(VISIT_EVERY_S)
    flooding = asyncio.ensure_future(flood(url, kind, seconds=seconds))
    while not flooding.done():
        start = time.monotonic()
        try:
            run.during_s.append(await asyncio.wait_for(visit(url), VISIT_TIMEOUT_S))
        except (WrongPage, ConnectionClosed, InvalidHandshake, OSError, TimeoutError) as err:
            name = type(err).__name__
            if isinstance(err, InvalidStatus):
                name = f"HTTP {err.response.status_code}"
            run.bystander_errors[name] = run.bystander_errors.get(name, 0) + 1
        await asyncio.sleep(max(0.0, start + VISIT_EVERY_S - time.monotonic()))
    run.flood = await flooding


def slowest(values: list[float]) -> str:
    """Which visit was the slowest ("#3 of 72"): the first ones meet a flood with no past."""
    if not values:
        return "none"
    return f"#{values.index(max(values)) + 1} of {len(values)}"


def kinds(errors: dict[str, int]) -> str:
    """ ": HTTP 429 x 3, TimeoutError x 1", or "" when none."""
    return ": " + ", ".join(f"{k} x {n}" for k, n in errors.items()) if errors else ""


def main() -> None:
    load_before = os.getloadavg()
    runs = []
    for kind, name, options in (
        ("reloads", "limits off", OFF),
        ("reloads", "default limits", ""),
        ("reruns", "default limits", ""),
    ):
        run = Run(f"{kind}, {name}")
        with (
            tempfile.TemporaryDirectory(prefix="lnlab-flood-") as d,
            make_cluster(Path(d), options=options) as url,
        ):
            asyncio.run(measure(url, run, kind))
        runs.append(run)
        print(
            run.name,
            spread(run.idle_s),
            spread(run.during_s),
            run.bystander_errors,
            run.flood,
            "slowest visit:",
            slowest(run.during_s),
            flush=True,
        )
    rows = [
        (
            "flood, HAProxy",
            "bystander idle p50 / p95 / max (s)",
            "bystander during the flood p50 / p95 / max (s)",
            "visits during the flood (errors)",
            "sessions the flood opened",
            "429s to the flood",
        )
    ]
    for run in runs:
        errors = sum(run.bystander_errors.values())
        rows.append(
            (
                run.name,
                spread(run.idle_s),
                spread(run.during_s),
                f"{len(run.during_s)} ({errors}{kinds(run.bystander_errors)})",
                str(run.flood.opened),
                str(run.flood.refused),
            )
        )
    limits = haproxy.Limits()
    notes = (
        f"{FLOODERS} flooders from one address for {FLOOD_S:.0f} s, through `make cluster N=2`: "
        "reloads = each opens a session of /step_through, waits for its whole-page run, closes "
        "it and opens the next; reruns = each keeps one session and asks it for whole-page "
        "runs back to back, a new text box value each (the app paces each session: "
        f"lnlab.serving.pace). After a 429 a flooder tries again {RETRY_AFTER_429_S * 1000:.0f} "
        f"ms later. A bystander from another address opens the same page, at most every "
        f"{VISIT_EVERY_S:g} s: "
        "seconds from connecting to its first run's end. Default limits: "
        f"{limits.websockets_per_10s} new sessions per 10 s and "
        f"{limits.max_websockets_per_client} open per address, {limits.requests_per_10s} "
        f"requests and {limits.connections_per_10s} new connections per 10 s. "
        f"{load_average(load_before, os.getloadavg())}; the flooders and the bystander (one "
        "Python process) share the cores with the cluster."
    )
    record("proxy_flood", "A flood of sessions from one address, and a bystander", rows, notes)


if __name__ == "__main__":
    main()
