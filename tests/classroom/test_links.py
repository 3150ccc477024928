"""Class links and the join QR code: every malformed link gets a clear InputError."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from lnlab.classroom.links import (
    JoinBase,
    StudentLink,
    TeacherLink,
    is_loopback,
    join_base,
    join_link,
    network_addresses,
    page_url,
    qr_image,
    read_link,
    teacher_link,
)
from lnlab.core.errors import InputError

CODE = "ABCDEFGHJ"
SECRET = "s3cret-Secret_s3cret-Secret_1234"
ME = "anonymous_Id-1234567"


def test_links_read_back():
    base = page_url("http://10.0.0.5:8501/step_through?v=1&present=1")
    assert base == "http://10.0.0.5:8501/class"
    assert join_link(base, CODE) == f"{base}?join={CODE}"
    assert teacher_link(base, CODE, SECRET) == f"{base}?class={CODE}&teacher={SECRET}"
    assert read_link({"join": "abc-def-ghj"}) == StudentLink(CODE)
    assert read_link({"join": CODE, "me": ME}) == StudentLink(CODE, ME)
    assert read_link({"class": CODE, "teacher": SECRET}) == TeacherLink(CODE, SECRET)
    assert read_link({"v": "1", "x": "1,2"}) is None


def test_the_class_page_under_any_page_and_a_path_prefix():
    assert page_url("http://h:8501/") == "http://h:8501/class"
    assert page_url("http://h:8501") == "http://h:8501/class"
    assert page_url("https://school.example/lnlab/padding?v=1") == (
        "https://school.example/lnlab/class"
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"join": "ABC"}, "9 characters"),
        ({"join": "ABCDEFGH0"}, "has no '0'"),
        ({"join": "x" * 10_000}, "not a class code"),
        ({"join": [CODE, CODE]}, "repeats join="),
        ({"join": CODE, "me": "<script>"}, "not a valid id"),
        ({"me": ME}, "without join="),
        ({"class": CODE}, "needs both"),
        ({"class": CODE, "teacher": "short"}, "not a valid teacher's secret"),
        ({"class": CODE, "teacher": SECRET, "join": CODE}, "mixes"),
    ],
)
def test_bad_links_say_what_is_wrong(params, message):
    with pytest.raises(InputError, match=message):
        read_link(params)


def test_the_qr_code_is_a_local_svg_image_that_scales():
    link = f"http://10.0.0.5:8501/class?join={CODE}"
    img = qr_image(link)
    src = re.search(r'src="([^"]+)"', img).group(1)
    assert img.startswith('<img class="lnlab-qr"') and src.startswith("data:image/svg+xml")
    svg = unquote(src.split(",", 1)[1])
    assert "viewBox" in svg and "width=" not in svg.split(">")[0]  # sized by CSS, not fixed
    assert "<image" not in svg and "href" not in svg  # nothing fetched from anywhere


def test_phones_get_an_address_they_can_reach():
    addresses = ["192.168.1.20", "10.0.0.3"]
    # the teacher's own address, when phones can reach it
    assert join_base("http://192.168.1.20:8501/padding", "", addresses) == JoinBase(
        "http://192.168.1.20:8501/class"
    )
    # localhost and 127.x: this machine's network address instead, same port, and why
    for local in ("http://localhost:8501/", "http://127.0.0.1:8501/x", "http://[::1]:8501/"):
        base = join_base(local, "", addresses)
        assert base.url == "http://192.168.1.20:8501/class"
        assert base.unreachable and base.others == ("http://10.0.0.3:8501/class",)
    # no network address: the loopback link, and the page says phones cannot join
    assert join_base("http://localhost:8501/", "", []) == JoinBase(
        "http://localhost:8501/class", "localhost"
    )
    # a configured public address wins (a proxy, a domain), path prefix included
    public = join_base("http://127.0.0.1:8501/", "https://class.school.example/lnlab", addresses)
    assert public == JoinBase("https://class.school.example/lnlab/class")
    assert join_link(public.url, CODE) == f"https://class.school.example/lnlab/class?join={CODE}"


def test_loopback_hosts_and_this_machines_addresses():
    for host in ("localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.8.9.10", "::1", ""):
        assert is_loopback(host), host
    for host in ("192.168.1.5", "10.0.0.1", "school.example", "8.8.8.8"):
        assert not is_loopback(host), host
    found = network_addresses()  # whatever this machine has: none is loopback or link-local
    assert all(not is_loopback(a) and not a.startswith("169.254.") for a in found)
