"""Class links and the join QR code: every malformed link gets a clear InputError."""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from lnlab.classroom.links import (
    StudentLink,
    TeacherLink,
    join_link,
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
