"""The local cluster as `make cluster` starts it, and floods of sessions through its proxy from
one local address (each client a harness.sessions.Session), with a visitor from another.

Used by tests/serving/test_cluster.py and bench.proxy_flood (which measures what the tests only
print).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from harness.sessions import LNLAB, ROOT, Session, WrongPage, stream
from harness.stats import percentile
from lnlab.serving.cluster import free_port, healthy

FLOODERS = 20
FLOOD_S = 20.0
FLOOD_FROM, BYSTANDER_FROM = "127.0.0.2", "127.0.0.3"
RETRY_AFTER_429_S = 0.05
START_TIMEOUT_S = 120.0
VISIT_TIMEOUT_S = 60.0


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


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    return " / ".join(
        f"{v:.2f}" for v in (percentile(values, 0.5), percentile(values, 0.95), max(values))
    )
