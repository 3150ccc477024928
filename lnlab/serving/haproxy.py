"""HAProxy in front of the app's server processes: its config, rendered from the one template
deploy/haproxy.cfg, and its runtime socket (server states, drain).

`python -m lnlab.serving.haproxy --compose` prints the config that deploy/compose/haproxy.cfg holds
(docker compose's replicas, found through Docker's DNS), `--kubernetes` deploy/k8s/haproxy.cfg
(the app's pods, found through the cluster's DNS); tests/serving/test_deploy.py checks each file
is what this prints.
"""

from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import importlib.util
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
STATS_PORT, STATS_PATH = 8404, "/stats"  # compose's proxy: `STATS_PATH;csv` lists the replicas
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Limits:
    """What one client address may do before HAProxy answers 429 (Retry-After: 10); over
    `max_open_per_client` open connections a new one is closed at once.

    Sized for a class of 60 behind one school router, which is one address. Opening a page in
    Chromium through the cluster is 96-151 requests (the app's JavaScript in many files) over
    up to 7-10 connections, and one websocket (a session); a page switch or a slide reuses
    them. So 60 students opening pages in the same 10 s make up to about 9,100 requests, 600
    connections and 60 websockets, and when a process dies its students (60 at most, the
    README's sizing rule) reconnect within a second: up to 120 new websockets in 10 s. Each
    limit is at least that, with room for a second tab each. A flood is caught by the
    websockets: every new session runs a whole page in an app process, the costliest thing a
    visitor can ask for.

    Websockets are counted per browser first (`websockets_per_browser_10s`, by the cookie
    the proxy gives each browser with its first page): a browser that reconnects in a loop
    is refused on its own (issue 38: one student's 15 a second had 14 of 20 classmates' page
    opens refused for 40 s), and only what its limit lets through counts for its address
    (`websockets_per_10s`: the class's 120 and one looping browser's 30). Those without the
    cookie (a script) share one count per address, with the same limits, apart from the
    browsers'; an address that opens them faster than 15 a second is held at 429 for as long
    as it goes on (the rejected attempts count too)."""

    requests_per_10s: int = 20_000
    connections_per_10s: int = 1_500
    max_open_per_client: int = 1_000
    websockets_per_10s: int = 150
    max_websockets_per_client: int = 300
    websockets_per_browser_10s: int = 30


LIMIT_HELP = {  # what each limit counts, for `python -m lnlab.serving.cluster --help`
    "requests_per_10s": "HTTP requests in 10 s, then 429",
    "connections_per_10s": "new connections in 10 s, then 429",
    "max_open_per_client": "open connections, then new ones are closed",
    "websockets_per_10s": "new sessions (websockets) in 10 s, then 429",
    "max_websockets_per_client": "open sessions (websockets), then 429",
    "websockets_per_browser_10s": "new sessions (websockets) of one browser in 10 s, then 429",
}
UNLIMITED = Limits(*[10**6] * 6)  # for benchmarks of one address's class


def inline_script_hashes() -> tuple[str, ...]:
    """CSP hashes ('sha256-...') of the inline scripts of the installed Streamlit's page
    (1.67 has one, `window.prerenderReady = false`), read from its file without importing it."""
    spec = importlib.util.find_spec("streamlit")
    if spec is None or spec.origin is None:
        return ()
    page = (Path(spec.origin).parent / "static" / "index.html").read_text()
    scripts = re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", page, re.S)
    return tuple(
        f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'"
        for s in scripts
    )


def content_security_policy() -> str:
    """The strictest policy the app's pages run under in Chromium (tests/browser/test_headers.py
    loads every page through HAProxy and fails on any violation): everything from the app's own
    origin, its websocket included ('self' covers ws: and wss: to the same host); Streamlit's
    one inline script by its hash; scripts from blob: URLs, which only a script already
    running in the page can make (Streamlit's components v2 imports a component's JavaScript
    from one: the step-through's lesson, lnlab.ui.live); WebAssembly, which protobuf.js's Long
    uses for 64-bit arithmetic (JavaScript's eval stays refused); inline styles, which
    Streamlit's components set; images as data: and blob: URLs (Plotly draws a chart's PNG
    download through both); fonts as data: URLs (in Streamlit's styles); no plugins, no framing
    by any site, no form posting elsewhere. Each of these was needed: without it Chromium
    reported a violation."""
    scripts = " ".join(("'self'", *inline_script_hashes(), "blob:", "'wasm-unsafe-eval'"))
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src {scripts}",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )


def security_headers() -> tuple[tuple[str, str], ...]:
    """The headers on every answer the proxy gives (the app's, its own 429s and errors): no
    page sends its address (a teacher's secret once was in one) to any other request; no
    content is sniffed; no other site may frame the app; the content security policy."""
    return (
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", f'"{content_security_policy()}"'),
        ("Permissions-Policy", '"camera=(), microphone=(), geolocation=(), payment=(), usb=()"'),
        ("Cross-Origin-Opener-Policy", "same-origin"),
    )


# What HAProxy answers itself, by status (those it can make: a request refused, a timeout, no
# process to serve it); 429 is the limits' own (`return`).
ERRORS = {
    403: "Forbidden.",
    404: "Not found.",
    405: "Method not allowed.",
    410: "Gone.",
    413: "The request is too large.",
    425: "Too early: try again.",
    429: "Too many requests from your address: wait a few seconds.",
    500: "The proxy failed: try again in a moment.",
    502: "The app did not answer: try again in a moment.",
    503: "No app process can take the request now: try again in a moment.",
    504: "The app did not answer in time: try again in a moment.",
}
# HAProxy 2.6 answers a request it cannot read (400), whose headers do not come within
# `timeout http-request` (408) or whose transfer coding it does not know (501) from its HTTP/1
# parser, before any rule runs, with a fixed text that no http-error or http-after-response
# rule reaches (measured: none of the security headers). The one thing a config can choose
# there is no answer at all (an empty error file), which these get: the connection is closed.
# A browser never sends such a request; a slow body (408 too) is closed the same way.
SILENT = (400, 408, 501)


def error_answers() -> str:
    """`errorfile` and `http-error` lines (for `defaults`): HAProxy's own error answers as
    plain text with the security headers, which http-after-response rules do not add to an
    error HAProxy raises, or (`SILENT`) none."""
    headers = "".join(f" hdr {name} {value}" for name, value in security_headers())
    silent = [f"    errorfile {status} /dev/null" for status in SILENT]
    return "\n".join(
        silent
        + [
            f'    http-error status {status} content-type "text/plain; charset=utf-8" '
            f'string "{text}"{headers}'
            for status, text in ERRORS.items()
        ]
    )


def after_response_headers() -> str:
    """The frontend's `http-after-response` lines setting `security_headers`."""
    return "\n".join(
        f"    http-after-response set-header {name} {value}" for name, value in security_headers()
    )


HTTP_REQUEST_TIMEOUT = "5s"  # a request's headers and body, from its first byte


def render(
    *,
    bind: str,
    socket_path: str,
    servers: str,
    limits: Limits = Limits(),
    cookie_extra: str = "",
    hard_stop_after: str = "30s",
    maxconn: int = 8192,
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
        "http_request_timeout": HTTP_REQUEST_TIMEOUT,
        "error_answers": error_answers(),
        "security_headers": after_response_headers(),
        "requests_per_10s": str(limits.requests_per_10s),
        "connections_per_10s": str(limits.connections_per_10s),
        "max_open_per_client": str(limits.max_open_per_client),
        "websockets_per_10s": str(limits.websockets_per_10s),
        "max_websockets_per_client": str(limits.max_websockets_per_client),
        "websockets_per_browser_10s": str(limits.websockets_per_browser_10s),
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


def _discovered_config(host: str, nameservers: str) -> str:
    """The config for replicas found through DNS (compose, Kubernetes): up to COMPOSE_SLOTS
    addresses of `host` on port 8501; each replica's cookie value is a keyed hash of its
    address (`dynamic`), the key from the environment (LNLAB_COOKIE_KEY), so that every
    proxy and every restart pins a visitor to the same replica. HAProxy's view of the
    replicas (state, address, cookie) is served as CSV on port STATS_PORT to private
    addresses only (the port is not published; `make compose-check` reads it)."""
    servers = (
        '    dynamic-cookie-key "${LNLAB_COOKIE_KEY}"\n'
        f"    server-template {BACKEND} 1-{COMPOSE_SLOTS} {host}:8501 check resolvers dns"
        " init-addr none\n"
        "\n"
        "resolvers dns\n"
        f"    {nameservers}\n"
        "    hold valid 5s\n"
        "    accepted_payload_size 8192\n"
        "\n"
        "frontend stats\n"
        f"    bind *:{STATS_PORT}\n"
        "    http-request deny unless { src 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 127.0.0.0/8 }\n"
        "    stats enable\n"
        f"    stats uri {STATS_PATH}\n"
        "    stats show-legends"
    )
    return render(
        bind="*:8080",
        socket_path="/var/lib/haproxy/admin.sock",
        servers=servers,
        cookie_extra=" dynamic",
    )


def compose_config() -> str:
    """deploy/compose/haproxy.cfg: the replicas of compose's service `app`, found through
    Docker's own DNS server."""
    return _discovered_config("app", "nameserver docker 127.0.0.11:53")


def kubernetes_config() -> str:
    """deploy/k8s/haproxy.cfg: the pods behind the headless Service whose full name is in
    LNLAB_APP_HOST (the proxy's Deployment sets it: HAProxy's resolver knows no search
    domains), found through the cluster's DNS server (the pod's resolv.conf)."""
    return _discovered_config('"${LNLAB_APP_HOST}"', "parse-resolv-conf")


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
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--compose", action="store_true", help="print compose's config")
    which.add_argument("--kubernetes", action="store_true", help="print Kubernetes' config")
    args = parser.parse_args(argv)
    print(compose_config() if args.compose else kubernetes_config(), end="")


if __name__ == "__main__":
    main()
