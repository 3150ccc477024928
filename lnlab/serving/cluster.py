"""A local cluster: N app server processes behind HAProxy, on one machine.

`scripts/cluster` (or `make cluster N=2`) runs `python -m lnlab.serving.cluster --processes 2`: each
process is `streamlit run app.py` on its own local port; HAProxy (deploy/haproxy.cfg) listens on
--port, pins each visitor to one process with the SERVERID cookie, checks every process's
/_stcore/health each second and answers 429 to a client over the limits. The cluster restarts a
process that dies. `python -m lnlab.serving.cluster restart` (or SIGHUP) restarts the processes one
at a time, each drained first, and reloads HAProxy without dropping its listener (haproxy -sf).

Why more processes: one Streamlit process runs one script at a time under Python's GIL, so a
class's clicks queue behind each other (bench/results/load.md). Shared state goes through the
database (LNLAB_DATABASE_URL, passed to every process), never a process's memory.
"""

from __future__ import annotations

import argparse
import ctypes
import dataclasses
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lnlab.serving import haproxy

ROOT = haproxy.ROOT
RUN_DIR = ROOT / ".cluster"
HAPROXY = os.environ.get("LNLAB_HAPROXY", "/usr/sbin/haproxy")
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 10.0
PR_SET_PDEATHSIG = 1  # prctl(2)
# Passed to every process: headless, no file watcher, no usage statistics, and Streamlit's
# own defaults for CORS and XSRF kept on. Behind HAProxy the browser sees one origin (HAProxy
# passes the Host header through), so Tornado's same-origin websocket check holds and neither
# needs turning off; XSRF tokens are a cookie the browser sends back, checked without any
# per-process secret, so they work across processes.
SERVE = (sys.executable, "-m", "streamlit", "run", "app.py")  # the app (app.py's st.App)
APP_FLAGS = (
    "--server.address",
    "127.0.0.1",
    "--server.headless",
    "true",
    "--server.fileWatcherType",
    "none",
    "--browser.gatherUsageStats",
    "false",
    "--server.enableCORS",
    "true",
    "--server.enableXsrfProtection",
    "true",
)


def _die_with_parent() -> None:
    """In a child, before exec: on Linux, get SIGTERM when the cluster's process dies (even by
    SIGKILL), so that no app process or HAProxy outlives it."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _popen(command: Sequence[str], **kwargs) -> subprocess.Popen:
    """Popen that ties the child's life to this process where it can: Linux sends the signal
    when the *thread* that started the child ends, so only children of the main thread get it
    (stop() ends the others)."""
    if sys.platform == "linux" and threading.current_thread() is threading.main_thread():
        kwargs["preexec_fn"] = _die_with_parent
    return subprocess.Popen(command, **kwargs)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(url: str, timeout_s: float = 2.0) -> bool:
    """Whether `url`/_stcore/health answers "ok"."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=timeout_s) as reply:
            return reply.read().decode().strip() == "ok"
    except OSError:
        return False


@dataclass
class App:
    """One app server process."""

    index: int  # from 1; its HAProxy server is haproxy.server_name(index)
    port: int
    log: Path
    process: subprocess.Popen | None = None

    @property
    def name(self) -> str:
        return haproxy.server_name(self.index)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None


@dataclass
class Cluster:
    """N processes and HAProxy; `with Cluster(...) as cluster:` starts and stops them."""

    processes: int = 2
    port: int = 8500
    host: str = "0.0.0.0"
    app_ports: Sequence[int] = ()  # default: port + 1 ... port + processes
    limits: haproxy.Limits = field(default_factory=haproxy.Limits)
    run_dir: Path = RUN_DIR
    database_url: str | None = None
    supervise: bool = True  # restart a process that dies
    apps: list[App] = field(default_factory=list)
    proxy: subprocess.Popen | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.processes < 1:
            raise ValueError("a cluster needs at least one process")
        ports = list(self.app_ports) or [self.port + i for i in range(1, self.processes + 1)]
        if len(ports) != self.processes:
            raise ValueError(f"{self.processes} processes need {self.processes} app ports")
        self.run_dir = Path(self.run_dir)
        self.apps = [
            App(i, port, self.run_dir / f"app{i}.log") for i, port in enumerate(ports, start=1)
        ]
        self.env = dict(os.environ)
        # One cookie secret for every process, so a cookie Streamlit signs in one is valid in
        # all (Streamlit makes a random one per process otherwise).
        self.env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", secrets.token_hex(32))
        if self.database_url:
            self.env["LNLAB_DATABASE_URL"] = self.database_url

    # ------------------------------------------------------------------ paths and config
    @property
    def socket_path(self) -> Path:
        return self.run_dir / "haproxy.sock"

    @property
    def config_path(self) -> Path:
        return self.run_dir / "haproxy.cfg"

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}"

    def config(self) -> str:
        return haproxy.render(
            bind=f"{self.host}:{self.port}",
            socket_path=str(self.socket_path),
            servers=haproxy.local_servers([app.port for app in self.apps]),
            limits=self.limits,
        )

    # ------------------------------------------------------------------ processes
    def _start_app(self, app: App) -> None:
        command = [*SERVE, "--server.port", str(app.port)]
        with open(app.log, "ab") as log:
            app.process = _popen(
                [*command, *APP_FLAGS], cwd=ROOT, env=self.env, stdout=log, stderr=log
            )

    def _wait_healthy(self, apps: Sequence[App], timeout_s: float = START_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        waiting = list(apps)
        while waiting:
            for app in list(waiting):
                if not app.alive():
                    tail = app.log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"{app.name} exited while starting:\n{tail}")
                if healthy(app.url):
                    waiting.remove(app)
            if waiting and time.monotonic() > deadline:
                names = ", ".join(app.name for app in waiting)
                raise TimeoutError(f"{names} not healthy after {timeout_s:.0f} s")
            if waiting:
                time.sleep(0.1)

    def _stop_app(self, app: App) -> None:
        if app.process is None:
            return
        if app.process.poll() is None:
            app.process.terminate()
            try:
                app.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                app.process.kill()
                app.process.wait()

    def _start_proxy(self, replace: subprocess.Popen | None = None) -> subprocess.Popen:
        """Start HAProxy on the current config; with `replace`, take over its listening
        sockets (-x) and let it finish its connections (-sf)."""
        self.config_path.write_text(self.config())
        check = subprocess.run(
            [HAPROXY, "-c", "-q", "-f", str(self.config_path)], capture_output=True, text=True
        )
        if check.returncode != 0:
            raise RuntimeError(f"HAProxy refused {self.config_path}:\n{check.stdout}{check.stderr}")
        command = [HAPROXY, "-db", "-f", str(self.config_path)]
        if replace is not None:
            command += ["-x", str(self.socket_path), "-sf", str(replace.pid)]
        log = open(self.run_dir / "haproxy.log", "ab")  # noqa: SIM115 (the process keeps it)
        process = _popen(command, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 10
        while not (self._answering(process) and healthy(self.url)):
            if process.poll() is not None or time.monotonic() > deadline:
                text = (self.run_dir / "haproxy.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"HAProxy did not start:\n{text}")
            time.sleep(0.05)
        return process

    def _answering(self, process: subprocess.Popen) -> bool:
        """Whether `process` is the HAProxy answering on the runtime socket (after a reload
        the old one answers until the new one has taken the socket over)."""
        try:
            info = haproxy.command(self.socket_path, "show info")
        except OSError:
            return False
        return f"\nPid: {process.pid}\n" in f"\n{info}"

    def start(self) -> Cluster:
        """Start every process (in parallel), wait until each is healthy, then HAProxy."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.socket_path.unlink(missing_ok=True)
        try:
            for app in self.apps:
                self._start_app(app)
            self._wait_healthy(self.apps)
            self.proxy = self._start_proxy()
        except BaseException:
            self.stop()
            raise
        (self.run_dir / "cluster.pid").write_text(str(os.getpid()))
        if self.supervise:
            threading.Thread(target=self._supervise, name="lnlab-supervisor", daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop HAProxy and every process."""
        self._stopping.set()
        with self._lock:
            if self.proxy is not None and self.proxy.poll() is None:
                self.proxy.terminate()
                self.proxy.wait(STOP_TIMEOUT_S)
            for app in self.apps:
                self._stop_app(app)
        (self.run_dir / "cluster.pid").unlink(missing_ok=True)

    def __enter__(self) -> Cluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _supervise(self) -> None:
        """Restart a process that has died (HAProxy's checks take it out meanwhile)."""
        while not self._stopping.wait(1.0):
            with self._lock:
                for app in self.apps:
                    if not app.alive() and not self._stopping.is_set():
                        print(f"lnlab: {app.name} exited; restarting it", flush=True)
                        self._start_app(app)

    # ------------------------------------------------------------------ operations
    def stats(self) -> dict[str, haproxy.ServerStat]:
        return haproxy.server_stats(self.socket_path)

    def kill(self, index: int, sig: int = signal.SIGKILL) -> None:
        """Send `sig` to process `index` (from 1), as a crash would."""
        app = self.apps[index - 1]
        if app.process is not None:
            app.process.send_signal(sig)

    def restart_app(self, index: int, drain_s: float = 30.0) -> None:
        """Restart process `index` gracefully: drain it (new visitors go elsewhere, its own
        stay) until its visitors have left or `drain_s` has passed, then take it out (maint:
        its remaining visitors reconnect to another process, keeping their URL), restart it,
        and put it back once healthy."""
        app = self.apps[index - 1]
        haproxy.set_state(self.socket_path, app.name, "drain")
        deadline = time.monotonic() + drain_s
        while self.stats()[app.name].current_sessions and time.monotonic() < deadline:
            time.sleep(0.5)
        haproxy.set_state(self.socket_path, app.name, "maint")
        with self._lock:
            self._stop_app(app)
            self._start_app(app)
        self._wait_healthy([app])
        haproxy.set_state(self.socket_path, app.name, "ready")

    def rolling_restart(self, drain_s: float = 30.0) -> None:
        """Every process in turn (restart_app), then HAProxy reloaded on a fresh config."""
        for app in self.apps:
            self.restart_app(app.index, drain_s)
        self.reload_proxy()

    def reload_proxy(self) -> None:
        """A new HAProxy takes over the listening socket; the old one finishes its open
        connections (at most hard-stop-after) and exits."""
        old = self.proxy
        self.proxy = self._start_proxy(replace=old)
        if old is not None:
            threading.Thread(target=old.wait, daemon=True).start()  # reap it when it exits


def _signal_running(run_dir: Path, sig: int) -> int:
    pid_file = run_dir / "cluster.pid"
    if not pid_file.exists():
        print(f"no cluster is running from {run_dir}", file=sys.stderr)
        return 1
    os.kill(int(pid_file.read_text()), sig)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lnlab.serving.cluster", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "action",
        nargs="?",
        default="run",
        choices=("run", "restart"),
        help="run the cluster (default), or restart a running one process by process",
    )
    parser.add_argument("--processes", "-n", type=int, default=2, help="app processes (2)")
    parser.add_argument("--port", type=int, default=8500, help="HAProxy's port (8500)")
    parser.add_argument("--host", default="0.0.0.0", help="HAProxy's address (all)")
    parser.add_argument("--run-dir", type=Path, default=RUN_DIR, help="config, socket, logs")
    parser.add_argument("--drain-s", type=float, default=30.0, help="drain time on restart")
    parser.add_argument(
        "--database-url", default=os.environ.get("LNLAB_DATABASE_URL"), help="class store"
    )
    defaults = haproxy.Limits()
    for limit in dataclasses.fields(haproxy.Limits):  # --requests-per-10s 20000 ...
        default = getattr(defaults, limit.name)
        parser.add_argument(
            f"--{limit.name.replace('_', '-')}",
            type=int,
            default=default,
            help=f"per client address: {haproxy.LIMIT_HELP[limit.name]} ({default})",
        )
    args = parser.parse_args(argv)
    if args.action == "restart":
        return _signal_running(args.run_dir, signal.SIGHUP)
    limits = haproxy.Limits(
        **{f.name: getattr(args, f.name) for f in dataclasses.fields(haproxy.Limits)}
    )
    cluster = Cluster(
        args.processes,
        args.port,
        args.host,
        limits=limits,
        run_dir=args.run_dir,
        database_url=args.database_url,
    )
    restart = threading.Event()
    signal.signal(signal.SIGHUP, lambda *_: restart.set())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(f"lnlab: starting {args.processes} processes behind HAProxy...", flush=True)
    with cluster:
        ports = ", ".join(str(app.port) for app in cluster.apps)
        print(f"lnlab: {cluster.url} (processes on 127.0.0.1:{ports}; logs in {args.run_dir})")
        print(
            "lnlab: `python -m lnlab.serving.cluster restart` restarts them one by one; "
            "Ctrl-C stops"
        )
        try:
            while True:
                if restart.wait(1.0):
                    restart.clear()
                    print("lnlab: rolling restart...", flush=True)
                    cluster.rolling_restart(args.drain_s)
                    print("lnlab: rolling restart done", flush=True)
        except KeyboardInterrupt:
            print("lnlab: stopping", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
