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
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from bench.browser import LNLAB, ROOT, percentile
from bench.report import load_average, record
from bench.sessions import Session, WrongPage, stream
from lnlab.serving import haproxy
from lnlab.serving.cluster import free_port, healthy

FLOODERS = 20
FLOOD_S = 20.0
IDLE_VISITS = 5
FLOOD_FROM, BYSTANDER_FROM = "127.0.0.2", "127.0.0.3"
RETRY_AFTER_429_S = 0.05
VISIT_EVERY_S = 0.25  # the bystander opens the page at most 4 times a second: a person
# reloading, under the 12 new sessions a second that HAProxy lets an address open (faster, it
# got 429s from its own visits, which a second run of this bench showed)
START_TIMEOUT_S = 120.0
VISIT_TIMEOUT_S = 60.0
OFF = (  # `make cluster` options that put the per-address limits out of reach
    "--requests-per-10s 1000000 --connections-per-10s 1000000 --max-open-per-client 1000000 "
    "--websockets-per-10s 1000000 --max-websockets-per-client 1000000"
)


def free_ports(count: int) -> int:
    """A port p with p .. p + count - 1 all free (make cluster puts its processes after it)."""
    while True:
        base = free_port()
        if base + count < 65535 and all(_free(base + i) for i in range(1, count)):
            return base


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@contextmanager
def make_cluster(run_dir: Path, processes: int = 2, options: str = "") -> Iterator[str]:
    """`make cluster N=<processes>` on free ports, its state and class store in `run_dir`; the
    proxy's URL once it answers. Stopped (SIGTERM to the whole command) on exit."""
    port = free_ports(processes + 1)
    args = f"--host 127.0.0.1 --run-dir {run_dir} --database-url sqlite:///{run_dir}/classes.db"
    command = [
        "make", "--no-print-directory", "cluster", f"N={processes}", f"CLUSTER_PORT={port}",
        f"CLUSTER_ARGS={args} {options}",
    ]  # fmt: skip
    log = (run_dir / "make-cluster.log").open("wb")
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (run_dir / "make-cluster.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"make cluster did not start:\n{tail}")
            time.sleep(0.2)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def websocket(url: str, source: str, timeout_s: float = VISIT_TIMEOUT_S) -> connect:
    """A websocket to the app through `url`, from local address `source`."""
    return stream(url, timeout_s=timeout_s, local_addr=(source, 0))


async def visit(url: str, source: str = BYSTANDER_FROM) -> float:
    """Open /step_through as a new visitor from `source`: seconds from connecting to the first
    run's end, its metric checked."""
    start = time.perf_counter()
    async with websocket(url, source) as ws:
        session = Session(ws, url + LNLAB.path)
        run = await session.rerun()
        if run.metric is None:
            raise WrongPage("the page drew no metric")
    return time.perf_counter() - start


@dataclass
class Flood:
    """What the flood got from the proxy."""

    opened: int = 0  # sessions opened (websocket accepted), each asked for a whole-page run
    refused: int = 0  # answered 429
    headers_on_429: set[str] = field(default_factory=set)  # the security headers a 429 carried
    retry_after: set[str] = field(default_factory=set)
    errors: dict[str, int] = field(default_factory=dict)


async def flood(
    url: str,
    kind: str = "reloads",
    clients: int = FLOODERS,
    seconds: float = FLOOD_S,
    until_refused: bool = False,
) -> Flood:
    """`clients` flooders from FLOOD_FROM for `seconds`; with `until_refused`, each stops at
    its first 429 instead (at the latest after `seconds`). Each flooder does `kind`:

    - "reloads": opens a session, waits for its whole-page run, closes it, again (what holding
      down a browser's reload key does): every session is new, which HAProxy sees;
    - "reruns": opens one session and asks it for whole-page runs back to back, each with a
      new value in the text box (what a script typing into the page does): inside one open
      websocket, which HAProxy does not see (the app paces a session's runs)."""
    out = Flood()
    deadline = time.monotonic() + seconds

    async def reloads(ws) -> None:
        out.opened += 1
        await Session(ws, url + LNLAB.path).rerun()

    async def reruns(ws) -> None:
        out.opened += 1
        session = Session(ws, url + LNLAB.path)
        await session.rerun()
        box = session.widgets[LNLAB.text_key].id
        k = 0
        while time.monotonic() < deadline:
            k += 1
            await session.rerun([WidgetState(id=box, string_value=f"1, 2, 3, 4, {k}")])

    action = {"reloads": reloads, "reruns": reruns}[kind]

    async def flooder() -> None:
        while time.monotonic() < deadline:
            try:
                async with websocket(url, FLOOD_FROM, VISIT_TIMEOUT_S) as ws:
                    await action(ws)
            except InvalidStatus as err:
                reply = err.response
                if reply.status_code != 429:
                    raise
                out.refused += 1
                out.retry_after.add(reply.headers.get("Retry-After", ""))
                out.headers_on_429 |= {
                    h for h in ("Referrer-Policy", "X-Content-Type-Options") if h in reply.headers
                }
                if until_refused:
                    return
                await asyncio.sleep(RETRY_AFTER_429_S)
            except (ConnectionClosed, InvalidHandshake, OSError, TimeoutError) as err:
                out.errors[type(err).__name__] = out.errors.get(type(err).__name__, 0) + 1

    await asyncio.gather(*(flooder() for _ in range(clients)))
    return out


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


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    return " / ".join(
        f"{v:.2f}" for v in (percentile(values, 0.5), percentile(values, 0.95), max(values))
    )


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
