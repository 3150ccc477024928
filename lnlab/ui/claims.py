"""What a browser keeps for a live class, in cookies the app sets, and where a visitor comes from.

- `lnlab_browser`: a random id of this browser, kept for a day (as long as a class can last).
  The class store counts classes and students per browser by it, a student is who their
  browser is (a reload, a new tab or rejoining finds the same student with the same score), and
  the heavy-work line gives a browser one place, whatever its tabs (lnlab.ui.line).
- `lnlab_teacher`: the class this browser teaches, `CODE.SECRET`, until the class's last
  possible hour. A reload, a new tab, the Class page opened by its address, a server restart
  or another process of a cluster all find the teacher's class again from it. The secret
  never goes into the address bar, a link or a Referer (`Referrer-Policy: no-referrer`).
- `lnlab_reports`: the classes this browser taught, `CODE.SECRET:CODE.SECRET…`, newest first
  (MAX_REPORT_CLAIMS), until the newest one's report is deleted: the teacher's past classes
  on the Class page, each opening its report (lnlab.classroom.report).

Streamlit reads the cookies a browser sent when its session opened (st.context.cookies); the
app writes them with a script file in the page (st.html; see write_cookies), SameSite=Strict,
Secure on https. Within
a session, what was written lives in session state.
"""

from __future__ import annotations

import html
import re
import secrets
from dataclasses import dataclass, field

import streamlit as st

from lnlab.serving.networks import visitor
from lnlab.ui import state
from lnlab.ui.server.shell import asset_url

BROWSER_COOKIE = "lnlab_browser"
TEACHER_COOKIE = "lnlab_teacher"
REPORTS_COOKIE = "lnlab_reports"
MAX_REPORT_CLAIMS = 20  # 20 claims of 42 characters: well under a cookie's 4 kB
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")
_CLAIM = re.compile(r"([2-9A-Z]{9})\.([A-Za-z0-9_-]{8,64})")
DAY_S = 24 * 3600  # the browser id's life: a class lasts at most CLASS_HOURS = 24


@dataclass
class Cookies:
    """What a session knows of its browser's cookies beyond those sent at its start
    (lnlab.ui.state)."""

    browser: str | None = None  # this browser's id (browser_id), once known
    written: dict[str, str | None] = field(default_factory=dict)  # what this session wrote:
    # name -> value, None where it deleted the cookie
    ages: dict[str, int] = field(default_factory=dict)  # name -> its Max-Age in seconds


def _cookie(name: str) -> str | None:
    """A cookie's value as this session knows it: written here, else sent at its start."""
    written = state.of(Cookies).written
    if name in written:
        return written[name]
    try:
        sent = st.context.cookies.get(name)
    except Exception:  # no request behind this run (AppTest): no cookies
        return None
    return sent if isinstance(sent, str) else None


def _write(name: str, value: str | None, max_age_s: int = 0) -> None:
    """Set (or, with None, delete) a cookie in the browser: `write_cookies` puts it in the
    page (a fragment or a callback cannot draw in the sidebar, a whole-page run can)."""
    cookies = state.of(Cookies)
    cookies.written[name] = value
    cookies.ages[name] = max_age_s if value is not None else 0


def write_cookies() -> None:
    """On every whole-page run: a script per cookie this session wrote, unchanged from run to
    run (the browser keeps the element, so the script runs once per change). The script is a
    file the app serves (lnlab.ui.server.shell's lnlab-cookie.js) that reads the cookie from its
    element: no inline script, which a content security policy would refuse."""
    cookies = state.of(Cookies)
    for name, value in cookies.written.items():
        age = cookies.ages.get(name, 0)
        cookie = f"{name}={value or ''}; Path=/; SameSite=Strict; Max-Age={age}"
        st.sidebar.html(
            f'<script src="{asset_url("lnlab-cookie.js")}" '
            f'data-cookie="{html.escape(cookie)}"></script>',
            unsafe_allow_javascript=True,
        )


def browser_id() -> str:
    """This browser's random id: from its cookie, else made now and stored in one. A browser
    that keeps no cookies gets one per session."""
    cookies = state.of(Cookies)
    if cookies.browser is None:
        sent = _cookie(BROWSER_COOKIE) or ""
        cookies.browser = sent if _TOKEN.fullmatch(sent) else secrets.token_urlsafe(18)
        if sent != cookies.browser:
            _write(BROWSER_COOKIE, cookies.browser, DAY_S)
    return cookies.browser


def teacher_claim() -> tuple[str, str] | None:
    """(code, secret) of the class this browser teaches, from its cookie, if any."""
    found = _CLAIM.fullmatch(_cookie(TEACHER_COOKIE) or "")
    return (found.group(1), found.group(2)) if found else None


def keep_teacher_claim(code: str, secret: str, seconds: float) -> None:
    """This browser teaches `code` for the next `seconds` (the class's last possible hour)."""
    value = f"{code}.{secret}"
    if _cookie(TEACHER_COOKIE) != value:
        _write(TEACHER_COOKIE, value, max(1, int(seconds)))


def drop_teacher_claim() -> None:
    if _cookie(TEACHER_COOKIE) is not None:
        _write(TEACHER_COOKIE, None)


def report_claims() -> list[tuple[str, str]]:
    """(code, secret) of each class this browser taught whose report it may still open,
    newest first."""
    found = (_CLAIM.fullmatch(part) for part in (_cookie(REPORTS_COOKIE) or "").split(":"))
    return [(m.group(1), m.group(2)) for m in found if m][:MAX_REPORT_CLAIMS]


def taught() -> list[tuple[str, str]]:
    """(code, secret) of each class this browser taught that it still keeps a claim of: the
    class it teaches, then its reports'. A teacher's way past a flood of class starts from
    their network (lnlab.classroom.store.ClassStore.open_class)."""
    teaching = teacher_claim()
    return [teaching, *report_claims()] if teaching else report_claims()


def keep_report_claim(code: str, secret: str, seconds: float) -> None:
    """This browser may open class `code`'s report for the next `seconds` (its class's last
    possible hour and the report's keeping time); it goes first in the list."""
    others = [claim for claim in report_claims() if claim[0] != code]
    _write_report_claims([(code, secret), *others], seconds)


def drop_report_claim(code: str, seconds: float) -> None:
    """The report of class `code` is gone: this browser no longer lists it (the others for
    `seconds` more)."""
    claims = report_claims()
    kept = [claim for claim in claims if claim[0] != code]
    if kept != claims:
        _write_report_claims(kept, seconds)


def _write_report_claims(claims: list[tuple[str, str]], seconds: float) -> None:
    value = ":".join(f"{c}.{s}" for c, s in claims[:MAX_REPORT_CLAIMS]) or None
    if _cookie(REPORTS_COOKIE) != value:
        _write(REPORTS_COOKIE, value, max(1, int(seconds)))


def client_address() -> str:
    """The visitor's network as the per-address limits count it (lnlab.serving.networks: an
    IPv6 visitor's /64), from the connection or the proxy in front; "" when unknown."""
    try:
        direct = st.context.ip_address
        forwarded = st.context.headers.get("X-Forwarded-For", "")
    except Exception:  # no request behind this run (AppTest)
        return ""
    return visitor(direct, forwarded)
