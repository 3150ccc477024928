"""An idle server while something else writes into the checkout: its CPU per second.

Run: `.venv/bin/python -m bench.quiet`. Starts the app as `make run` does (no file watcher,
.streamlit/config.toml) and, beside it, as Streamlit's default would (`--server.fileWatcherType
auto`, what `make dev` uses); opens one session on each, then for WINDOW_S seconds a busy loop
writes and removes files under .venv (as pip or a build does) while nobody uses the app. Prints
each server's CPU seconds per second over the window (from /proc), and the writer's own as the
floor. Appends to bench/results/quiet.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from harness.sessions import ROOT
from lnlab.serving.cluster import free_port, healthy

WINDOW_S = 30.0
RESULTS = ROOT / "bench" / "results" / "quiet.md"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def start(*flags: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    process = subprocess.Popen(
        [*command, *flags], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while not healthy(url):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{command} did not start")
        time.sleep(0.3)
    return process, url


def open_session(url: str) -> None:
    """One visitor opens the home page and leaves the tab open (a session, a script run)."""
    from websockets.sync.client import connect

    socket = connect(url.replace("http", "ws") + "/_stcore/stream")
    threading.Thread(target=lambda: _drain(socket), daemon=True).start()


def _drain(socket) -> None:
    try:
        for _ in socket:
            pass
    except Exception:
        return


def busy_writer(stop: threading.Event, folder: Path) -> None:
    """Write and remove small files under `folder`, as an install does, until `stop`."""
    n = 0
    while not stop.is_set():
        path = folder / f"f{n % 200}.py"
        path.write_text(f"x = {n}\n")
        if n % 2:
            path.unlink()
        n += 1
        time.sleep(0.002)


def main() -> None:
    quiet, quiet_url = start()
    watching, watching_url = start("--server.fileWatcherType", "auto")
    try:
        for url in (quiet_url, watching_url):
            open_session(url)
        time.sleep(10)  # both sessions' first runs done
        venv_site = ROOT / ".venv" / "lib"
        with tempfile.TemporaryDirectory(dir=next(venv_site.glob("python*/site-packages"))) as tmp:
            stop = threading.Event()
            writer = threading.Thread(target=busy_writer, args=(stop, Path(tmp)))
            before = {p.pid: cpu_s(p.pid) for p in (quiet, watching)}
            me, start_t = time.process_time(), time.monotonic()
            writer.start()
            time.sleep(WINDOW_S)
            stop.set()
            writer.join()
            elapsed = time.monotonic() - start_t
            used = {pid: (cpu_s(pid) - s) / elapsed for pid, s in before.items()}
            floor = (time.process_time() - me) / elapsed
    finally:
        for process in (quiet, watching):
            process.terminate()
            process.wait(timeout=30)
    load = os.getloadavg()[0]
    rows = [
        ("make run (no file watcher)", used[quiet.pid]),
        ("--server.fileWatcherType auto (make dev)", used[watching.pid]),
        ("the writer itself (floor)", floor),
    ]
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"\n## {stamp}, {WINDOW_S:.0f} s of writes under .venv, load {load:.2f}\n"]
    lines += ["| server | CPU s per s |", "|---|---|"]
    lines += [f"| {name} | {value:.3f} |" for name, value in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if not RESULTS.exists():
        RESULTS.write_text("# bench.quiet: an idle server's CPU while the checkout is written\n")
    with RESULTS.open("a") as out:
        out.write(text)


if __name__ == "__main__":
    main()
