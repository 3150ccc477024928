"""A live class's links: the students' join link, the teacher's link, and the join QR code.

A link is untrusted input like any other: a code, a secret or a student id that is malformed
raises InputError with a message for the person who opened it; nothing is looked up here.
The QR code is drawn locally as SVG (segno) and sent inside the page, so no page asks
another host for an image.

- join link: `/class?join=CODE`; once joined, `&me=ID` (the student's anonymous id) is added,
  so a reload or another device's bookmark keeps the student's answers and score;
- teacher link: `/class?class=CODE&teacher=SECRET`, for the teacher only (it can pose and
  reveal questions and download the counts).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
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


def join_link(base: str, code: str, me: str | None = None) -> str:
    """The students' link (`base` is page_url's); with `me`, a student's own link back."""
    query = {JOIN: code} | ({ME: me} if me else {})
    return f"{base}?{urlencode(query)}"


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
