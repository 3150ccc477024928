"""HAProxy in front of the app's server processes: its config, rendered from the one template
deploy/haproxy.cfg, and its runtime socket (server states, drain).

`python -m lnlab.serving.haproxy --compose` prints the config that deploy/compose/haproxy.cfg holds
(docker compose's replicas, found through Docker's DNS); tests/serving/test_deploy.py checks the
file is what this prints.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "haproxy.cfg"
COMPOSE_CONFIG = ROOT / "deploy" / "compose" / "haproxy.cfg"
BACKEND = "app"
COMPOSE_SLOTS = 16  # the most app replicas compose's proxy looks for (docker compose --scale)
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Limits:
    """What one client address may do before HAProxy answers 429 (Retry-After: 10).

    A browser tab opens one websocket and a few HTTP connections, and a first page load asks
    for about 40 files; a class behind one NAT address shares all of these."""

    requests_per_10s: int = 1000
    connections_per_10s: int = 500
    max_open_per_client: int = 200


def render(
    *,
    bind: str,
    socket_path: str,
    servers: str,
    limits: Limits = Limits(),
    cookie_extra: str = "",
    hard_stop_after: str = "30s",
    maxconn: int = 4096,
) -> str:
    """deploy/haproxy.cfg with its placeholders filled; `servers` is the backend's server
    lines (indented)."""
    values = {
        "bind": bind,
        "socket": socket_path,
        "servers": servers,
        "cookie_extra": cookie_extra,
        "hard_stop_after": hard_stop_after,
        "maxconn": str(maxconn),
        "requests_per_10s": str(limits.requests_per_10s),
        "connections_per_10s": str(limits.connections_per_10s),
        "max_open_per_client": str(limits.max_open_per_client),
    }
    template = TEMPLATE.read_text()
    missing = set(_PLACEHOLDER.findall(template)) - set(values)
    if missing:
        raise KeyError(f"deploy/haproxy.cfg names unknown placeholders: {sorted(missing)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def server_name(index: int) -> str:
    """The name (and cookie value) of the index-th process, from 1."""
    return f"{BACKEND}{index}"


def local_servers(ports: Sequence[int]) -> str:
    """One server line per local process, its cookie value its name."""
    return "\n".join(
        f"    server {server_name(i)} 127.0.0.1:{port} cookie {server_name(i)} check"
        for i, port in enumerate(ports, start=1)
    )


def compose_config() -> str:
    """The config for docker compose: up to COMPOSE_SLOTS replicas of service `app` found
    through Docker's DNS; each replica's cookie value is a keyed hash of its address
    (`dynamic`), the key from the environment (LNLAB_COOKIE_KEY)."""
    servers = (
        '    dynamic-cookie-key "${LNLAB_COOKIE_KEY}"\n'
        f"    server-template {BACKEND} 1-{COMPOSE_SLOTS} app:8501 check resolvers docker"
        " init-addr none\n"
        "\n"
        "resolvers docker\n"
        "    nameserver dns 127.0.0.11:53\n"
        "    hold valid 5s\n"
        "    accepted_payload_size 8192"
    )
    return render(
        bind="*:8080",
        socket_path="/var/lib/haproxy/admin.sock",
        servers=servers,
        cookie_extra=" dynamic",
    )


def command(socket_path: str | Path, line: str, timeout_s: float = 5.0) -> str:
    """Send one command to HAProxy's runtime socket; its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(socket_path))
        sock.sendall(line.encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


@dataclass(frozen=True)
class ServerStat:
    """One backend server as `show stat` reports it."""

    name: str
    status: str  # UP, DOWN, DRAIN, MAINT, "UP 1/2" while rising...
    current_sessions: int
    total_sessions: int


def server_stats(socket_path: str | Path) -> dict[str, ServerStat]:
    """The app backend's servers, by name."""
    text = command(socket_path, "show stat").lstrip("# ")
    stats = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row["pxname"] == BACKEND and row["svname"] not in ("FRONTEND", "BACKEND"):
            stats[row["svname"]] = ServerStat(
                row["svname"], row["status"], int(row["scur"] or 0), int(row["stot"] or 0)
            )
    return stats


def set_state(socket_path: str | Path, server: str, state: str) -> None:
    """Put a server in state ready, drain (only its pinned visitors) or maint (none)."""
    if state not in ("ready", "drain", "maint"):
        raise ValueError(f"unknown server state {state!r}")
    answer = command(socket_path, f"set server {BACKEND}/{server} state {state}").strip()
    if answer:
        raise RuntimeError(f"HAProxy refused state {state} for {server}: {answer}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compose", action="store_true", help="print compose's config")
    args = parser.parse_args(argv)
    if not args.compose:
        parser.error("say what to print: --compose")
    print(compose_config(), end="")


if __name__ == "__main__":
    main()
