"""A live class's links: the students' join link, the teacher's link, and the join QR code.

A link is untrusted input like any other: a code, a secret or a student id that is malformed
raises InputError with a message for the person who opened it; nothing is looked up here.
The QR code is drawn locally as SVG (segno) and sent inside the page, so no page asks
another host for an image.

- join link: `/class?join=CODE`. A student is who their browser is (lnlab.ui.claims keeps a
  random id in a cookie), never an id in a link that anyone could open: `me=ID`, which older
  links carried, is refused unless it is this browser's own student;
- teacher link: `/class?class=CODE&teacher=SECRET`, for the teacher only (it can pose and
  reveal questions and download the counts); the page moves the secret into a cookie and out
  of the address bar.

Phones must reach the address in the join link. `join_base` builds it: the public address
configured in $LNLAB_PUBLIC_URL (a proxy or a domain) when set; else the address the
teacher's browser used, unless that is this machine's loopback (localhost, 127.x, ::1), which
no phone can reach: then one of this machine's network addresses, with the same port.
"""

from __future__ import annotations

import fcntl
import html
import ipaddress
import os
import re
import socket
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno

from lnlab.classroom.store import normalize_code
from lnlab.core.errors import InputError

PAGE_PATH = "class"  # the Class page's URL path (pages/class.py)
JOIN, ME = "join", "me"  # the student's link
CLASS, TEACHER = "class", "teacher"  # the teacher's link
PARAMS = (JOIN, ME, CLASS, TEACHER)

_TOKEN = re.compile(r"[A-Za-z0-9_-]{8,64}")  # secrets.token_urlsafe's alphabet


def parse_token(raw: str, name: str) -> str:
    """A teacher's secret or a student's id: 8 to 64 letters, digits, - and _."""
    if not _TOKEN.fullmatch(raw[:65]):
        raise InputError(f'"{_start(raw)}" is not a valid {name}')
    return raw


def _start(raw: str) -> str:
    """The start of a bad value, to quote in a message."""
    return raw[:20] + ("…" if len(raw) > 20 else "")


@dataclass(frozen=True)
class StudentLink:
    """`?join=CODE[&me=ID]`: `me` is None before the student has joined."""

    code: str
    me: str | None = None


@dataclass(frozen=True)
class TeacherLink:
    """`?class=CODE&teacher=SECRET`."""

    code: str
    secret: str


def read_link(params: Mapping[str, str | list[str]]) -> StudentLink | TeacherLink | None:
    """The class link in a URL's query parameters, None when there is none.

    Raises InputError for a repeated parameter, a malformed code (lnlab.classroom's
    normalize_code), id or secret, or a link that mixes the teacher's and the student's.
    """
    present = {name: params[name] for name in PARAMS if name in params}
    if not present:
        return None
    for name, value in present.items():
        if not isinstance(value, str):
            raise InputError(f"the link repeats {name}=")
    if CLASS in present or TEACHER in present:
        if JOIN in present or ME in present:
            raise InputError("the link mixes a teacher's link and a student's link")
        if CLASS not in present or TEACHER not in present:
            raise InputError("a teacher's link needs both class= and teacher=")
        return TeacherLink(
            normalize_code(present[CLASS]), parse_token(present[TEACHER], "teacher's secret")
        )
    if JOIN not in present:
        raise InputError("the link has me= without join=")
    me = present.get(ME)
    return StudentLink(normalize_code(present[JOIN]), None if me is None else parse_token(me, "id"))


def page_url(current_url: str) -> str:
    """The Class page's URL on the server that served `current_url` (any page of the app)."""
    parts = urlsplit(current_url)
    path = parts.path.rsplit("/", 1)[0] + "/" + PAGE_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


PUBLIC_URL_ENV = "LNLAB_PUBLIC_URL"  # e.g. https://class.school.example (a proxy, a domain)


def is_loopback(host: str | None) -> bool:
    """Whether `host` names this machine only (localhost, 127.x, ::1): no phone reaches it."""
    if not host:
        return True
    if host.lower() in ("localhost", "localhost.localdomain") or host.lower().endswith(
        ".localhost"
    ):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class JoinBase:
    """Where students join: `url` (the Class page's), and when the teacher's own address
    would not reach phones, `unreachable` (that address) and `others` (this machine's other
    network addresses, as Class page URLs)."""

    url: str
    unreachable: str = ""
    others: tuple[str, ...] = ()


def join_base(current_url: str, public_url: str = "", addresses: Sequence[str] = ()) -> JoinBase:
    """The Class page's URL that phones can reach (see the module docstring); `addresses` are
    this machine's network addresses (network_addresses())."""
    if public_url.strip():
        return JoinBase(page_url(public_url.strip().rstrip("/") + "/"))
    base = page_url(current_url)
    parts = urlsplit(base)
    if not is_loopback(parts.hostname):
        return JoinBase(base)
    port = f":{parts.port}" if parts.port else ""
    found = [
        urlunsplit((parts.scheme or "http", _host(a) + port, parts.path, "", "")) for a in addresses
    ]
    if not found:
        return JoinBase(base, parts.hostname or "this address")
    return JoinBase(found[0], parts.hostname or "localhost", tuple(found[1:]))


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


_VIRTUAL = ("docker", "br-", "veth", "virbr", "lxc", "cni", "flannel", "tun", "tap")


def network_addresses() -> list[str]:
    """This machine's IPv4 addresses that another device may reach: the one its default route
    leaves from first (asked of the kernel: a UDP socket "connected" to a documentation
    address sends nothing), then every other interface's, private ranges (a school's network)
    first; not loopback, link-local or a container bridge. Linux reads the interfaces (ioctl);
    elsewhere, the addresses its host name resolves to."""
    found: list[str] = []
    try:
        names = [n for _, n in socket.if_nameindex() if not n.startswith(_VIRTUAL)]
    except OSError:
        names = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: routed, never sent to
            primary = probe.getsockname()[0]
        except OSError:
            primary = ""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for name in names:
            try:
                packed = fcntl.ioctl(
                    probe.fileno(), 0x8915, struct.pack("256s", name[:15].encode())
                )  # SIOCGIFADDR
                found.append(socket.inet_ntoa(packed[20:24]))
            except OSError:
                continue
    if not found:
        try:
            found = socket.gethostbyname_ex(socket.gethostname())[2]
        except OSError:
            found = []
    kept = []
    for text in dict.fromkeys(found):
        ip = ipaddress.ip_address(text)
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified):
            kept.append(ip)
    kept.sort(key=lambda ip: (str(ip) != primary, not ip.is_private, ip))
    return [str(ip) for ip in kept]


def public_url() -> str:
    """The configured public address ($LNLAB_PUBLIC_URL), or ""."""
    return os.environ.get(PUBLIC_URL_ENV, "").strip()


def join_link(base: str, code: str) -> str:
    """The students' link (`base` is page_url's or join_base's)."""
    return f"{base}?{urlencode({JOIN: code})}"


def teacher_link(base: str, code: str, secret: str) -> str:
    """The teacher's link: whoever opens it can pose and reveal questions."""
    return f"{base}?{urlencode({CLASS: code, TEACHER: secret})}"


def qr_image(link: str) -> str:
    """The link as a QR code: an HTML <img> whose source is the SVG itself (a data URI), with
    no fixed size, so CSS scales it to its box. st.html strips inline <svg>, not an image.

    Error correction M, a 4-module quiet zone, black on white: phones read it from across a
    room when it fills a good part of a projected screen.
    """
    code = segno.make(link, error="m", micro=False)
    uri = code.svg_data_uri(omitsize=True, border=4, dark="#000", light="#fff")
    return f'<img class="lnlab-qr" alt="QR code of {html.escape(link)}" src="{uri}">'
