"""A served app watches no files: an idle server's CPU stays ~0 whatever touches the tree.

Streamlit's default file watcher watches every module the app loaded under its folder, the
virtual environment's included: an idle server spent 0.6-0.7 of a core whenever something
touched .venv (38,662 "Inotify queue overflowed" lines in 26 minutes). .streamlit/config.toml
turns it off for every way the app is served; `make dev` turns it on. Read here from the
server process itself: an inotify instance among its open files is a watcher. No timing.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import ROOT

START_S = 120  # a deadline for the server to answer, not a measure


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _inotify_instances(pid: int) -> int:
    """The inotify instances among the process's open files (one closing meanwhile is not)."""
    found = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found += "inotify" in os.readlink(fd)
        except FileNotFoundError:
            continue
    return found


def _serve(tmp_path: Path, *flags: str) -> subprocess.Popen:
    port = _free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    env = os.environ | {"LNLAB_DATABASE_URL": f"sqlite:///{tmp_path / 'classes.db'}"}
    log = (tmp_path / f"server-{port}.log").open("wb")
    process = subprocess.Popen([*command, *flags], cwd=ROOT, stdout=log, stderr=log, env=env)
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2):
                # a page opened: Streamlit starts watching when a session starts
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).read()
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    pytest.fail(f"the server did not start: {(tmp_path / f'server-{port}.log').read_text()}")


@pytest.mark.parametrize(
    ("flags", "watching"), [((), False), (("--server.fileWatcherType", "auto"), True)]
)
def test_a_served_app_watches_no_files_and_make_dev_does(tmp_path, flags, watching):
    process = _serve(tmp_path, *flags)
    try:
        if watching:  # Streamlit's watcher starts with the first session's script run
            from websockets.sync.client import connect

            url = process.args[process.args.index("--server.port") + 1]
            with connect(f"ws://127.0.0.1:{url}/_stcore/stream"):
                deadline = time.monotonic() + START_S
                while not _inotify_instances(process.pid) and time.monotonic() < deadline:
                    time.sleep(0.2)
        assert (_inotify_instances(process.pid) > 0) is watching
    finally:
        process.terminate()
        process.wait(timeout=30)
